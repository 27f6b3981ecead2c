//! Every test file of the workspace is in exactly one test binary. The packages group their
//! `tests/*.rs` files as modules of a few binaries (`autotests = false`, a `[[test]]` per
//! binary, `mod NAME;` in its root file such as `tests/suite.rs`), so a file no binary lists
//! would silently never run: this fails for it, for a file two binaries list, and for a package
//! that lets Cargo make a binary of each file again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// One test binary: its package (name and directory), its name and its root file.
struct Binary {
    package: String,
    dir: PathBuf,
    name: String,
    root: PathBuf,
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn manifest(dir: &Path) -> Result<toml::Table, String> {
    let path = dir.join("Cargo.toml");
    toml::from_str(&read(&path)?).map_err(|e| format!("{}: {e}", path.display()))
}

/// The workspace's package directories: the root's own package and every member.
fn packages(workspace: &Path) -> Result<Vec<PathBuf>, String> {
    let root = manifest(workspace)?;
    let mut dirs = Vec::new();
    if root.contains_key("package") {
        dirs.push(workspace.to_path_buf());
    }
    let members = root
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(toml::Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    for member in members {
        let member = member
            .as_str()
            .ok_or("a workspace member is not a string")?;
        if member.contains('*') {
            return Err(format!(
                "workspace member `{member}` is a glob: list the packages by name"
            ));
        }
        dirs.push(workspace.join(member));
    }
    Ok(dirs)
}

/// The `.rs` files directly in `dir` (none when there is no such directory).
fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "rs"))
        .collect();
    files.sort();
    files
}

/// A package's test binaries as Cargo builds them, and whether Cargo discovers them itself.
fn binaries(dir: &Path) -> Result<(bool, Vec<Binary>), String> {
    let toml = manifest(dir)?;
    let package = toml
        .get("package")
        .and_then(|p| p.get("name"))
        .and_then(toml::Value::as_str)
        .unwrap_or("?")
        .to_owned();
    let autotests = toml
        .get("package")
        .and_then(|p| p.get("autotests"))
        .and_then(toml::Value::as_bool)
        .unwrap_or(true);
    let tests = dir.join("tests");
    let mut out = Vec::new();
    let listed = toml.get("test").and_then(toml::Value::as_array);
    for test in listed.map(Vec::as_slice).unwrap_or_default() {
        let name = test.get("name").and_then(toml::Value::as_str);
        let name = name.ok_or_else(|| format!("{package}: a [[test]] without a name"))?;
        let root = match test.get("path").and_then(toml::Value::as_str) {
            Some(path) => dir.join(path),
            None if tests.join(format!("{name}.rs")).is_file() => tests.join(format!("{name}.rs")),
            None => tests.join(name).join("main.rs"),
        };
        out.push(Binary {
            package: package.clone(),
            dir: dir.to_path_buf(),
            name: name.to_owned(),
            root,
        });
    }
    if autotests {
        let nested = std::fs::read_dir(&tests).into_iter().flatten().flatten();
        let mains = nested
            .map(|e| e.path().join("main.rs"))
            .filter(|p| p.is_file());
        for root in rs_files(&tests).into_iter().chain(mains) {
            if out.iter().all(|b| b.root != root) {
                let stem = root.with_extension("");
                let name = match stem.file_name().and_then(|n| n.to_str()) {
                    Some("main") => stem.parent().and_then(Path::file_name),
                    _ => stem.file_name(),
                };
                let name = name
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                out.push(Binary {
                    package: package.clone(),
                    dir: dir.to_path_buf(),
                    name,
                    root,
                });
            }
        }
    }
    Ok((autotests, out))
}

/// The files `root` declares as modules at its top level: `mod NAME;`, found beside it as
/// `NAME.rs` or `NAME/mod.rs`, or where a `#[path = "…"]` right above says.
fn modules(root: &Path) -> Result<Vec<(String, PathBuf)>, String> {
    let dir = root.parent().unwrap_or(Path::new("."));
    let mut found = Vec::new();
    let mut path_attr: Option<String> = None;
    let mut depth = 0usize;
    for line in read(root)?.lines() {
        let code = line.split("//").next().unwrap_or("").trim();
        let top = depth == 0;
        depth += code.matches('{').count();
        depth = depth.saturating_sub(code.matches('}').count());
        if !top || code.is_empty() {
            continue;
        }
        if let Some(rest) = code.strip_prefix("#[path") {
            path_attr = rest.split('"').nth(1).map(str::to_owned);
            continue;
        }
        if code.starts_with("#[") {
            continue;
        }
        let item = code
            .strip_prefix("pub(crate) ")
            .or_else(|| code.strip_prefix("pub "))
            .unwrap_or(code);
        if let Some(name) = item.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            let name = name.trim().to_owned();
            let file = match path_attr.take() {
                Some(path) => dir.join(path),
                None if dir.join(format!("{name}.rs")).is_file() => dir.join(format!("{name}.rs")),
                None => dir.join(&name).join("mod.rs"),
            };
            found.push((name, file));
        }
        path_attr = None;
    }
    Ok(found)
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// What is wrong with the grouping of the workspace at `workspace`, one sentence each.
fn problems(workspace: &Path) -> Result<Vec<String>, String> {
    let mut problems = Vec::new();
    let mut ungrouped = Vec::new();
    let mut test_files = Vec::new();
    let mut seen: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let mut all = Vec::new();
    for dir in packages(workspace)? {
        let files = rs_files(&dir.join("tests"));
        let (autotests, bins) = binaries(&dir)?;
        if autotests && !files.is_empty() {
            ungrouped.push(format!(
                "{}: Cargo makes a test binary of each file of tests/ (autotests): set \
                 `autotests = false` under [package] and list the files as modules of one \
                 binary (a `[[test]]` named after the package, such as `core_suite`, whose root \
                 file has a `mod NAME;` line for each)",
                dir.strip_prefix(workspace)
                    .unwrap_or(&dir)
                    .join("Cargo.toml")
                    .display()
            ));
        }
        for bin in &bins {
            let what = format!("test binary `{}` of {}", bin.name, bin.package);
            seen.entry(canonical(&bin.root))
                .or_default()
                .push(format!("{what} (its root)"));
            for (name, file) in modules(&bin.root)? {
                seen.entry(canonical(&file))
                    .or_default()
                    .push(format!("{what} (`mod {name};`)"));
            }
        }
        test_files.extend(files.iter().map(|f| (f.clone(), dir.clone())));
        all.extend(bins);
    }
    for (file, dir) in test_files {
        let shown = file
            .strip_prefix(workspace)
            .unwrap_or(&file)
            .display()
            .to_string();
        match seen
            .get(&canonical(&file))
            .map(Vec::as_slice)
            .unwrap_or_default()
        {
            [] => {
                let names: Vec<String> = all
                    .iter()
                    .filter(|b| b.dir == dir)
                    .map(|b| {
                        b.root
                            .strip_prefix(workspace)
                            .unwrap_or(&b.root)
                            .display()
                            .to_string()
                    })
                    .collect();
                let stem = file.file_stem().unwrap_or_default().to_string_lossy();
                problems.push(format!(
                    "{shown} is in no test binary, so its tests never run: add `mod {stem};` \
                     to the root file of one ({})",
                    names.join(", ")
                ));
            }
            [_] => {}
            several => problems.push(format!(
                "{shown} is in {} test binaries, so its tests run {} times: {}; keep it in one",
                several.len(),
                several.len(),
                several.join(", ")
            )),
        }
    }
    let mut names: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for bin in &all {
        names.entry(&bin.name).or_default().push(&bin.package);
    }
    for (name, packages) in names.into_iter().filter(|(_, p)| p.len() > 1) {
        problems.push(format!(
            "test binary `{name}` is in {} packages ({}), so `cargo test --workspace --test \
             {name}` runs them all: name each after its package",
            packages.len(),
            packages.join(", ")
        ));
    }
    problems.extend(ungrouped);
    Ok(problems)
}

#[test]
fn every_test_file_of_the_workspace_is_in_exactly_one_test_binary() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"));
    let problems = problems(workspace).unwrap();
    assert!(problems.is_empty(), "\n{}", problems.join("\n"));
}

#[test]
fn a_forgotten_a_doubled_and_an_ungrouped_test_file_and_a_shared_binary_name_are_each_named_with_the_fix()
 {
    let dir = tempfile::tempdir().unwrap();
    let w = dir.path();
    let write = |rel: &str, text: &str| {
        let path = w.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write(
        "Cargo.toml",
        "[workspace]\nmembers = [\"grouped\", \"loose\", \"same\"]\n",
    );
    write(
        "grouped/Cargo.toml",
        "[package]\nname = \"grouped\"\nautotests = false\n\n[[test]]\nname = \"suite\"\n\n\
         [[test]]\nname = \"other\"\npath = \"tests/other/main.rs\"\n",
    );
    // `kept` is listed once; `twice` in both binaries; `forgotten` in none; `helper` is a
    // support module at the top of a binary, and the inline block's module is not a file of
    // tests/.
    write(
        "grouped/tests/suite.rs",
        "//! The suite.\nmod helper;\n#[path = \"../../shared/x.rs\"]\nmod shared_x;\n\
         mod support {\n    pub mod inner;\n}\n\nmod kept;\n#[cfg(unix)]\npub mod twice;\n",
    );
    write(
        "grouped/tests/other/main.rs",
        "#[path = \"../twice.rs\"]\nmod twice;\n",
    );
    for file in ["helper", "kept", "twice", "forgotten"] {
        write(&format!("grouped/tests/{file}.rs"), "#[test]\nfn t() {}\n");
    }
    write("shared/x.rs", "");
    write("loose/Cargo.toml", "[package]\nname = \"loose\"\n");
    write("loose/tests/alone.rs", "#[test]\nfn t() {}\n");
    // `same` names its binary like `grouped`'s.
    write(
        "same/Cargo.toml",
        "[package]\nname = \"same\"\nautotests = false\n\n[[test]]\nname = \"suite\"\n",
    );
    write("same/tests/suite.rs", "");

    let problems = problems(w).unwrap();
    assert_eq!(problems.len(), 4, "{problems:#?}");
    assert!(
        problems[0].starts_with("grouped/tests/forgotten.rs is in no test binary")
            && problems[0].contains("add `mod forgotten;` to the root file of one")
            && problems[0].contains("(grouped/tests/suite.rs, grouped/tests/other/main.rs)"),
        "{}",
        problems[0]
    );
    assert!(
        problems[1].starts_with("grouped/tests/twice.rs is in 2 test binaries")
            && problems[1].contains("`suite` of grouped (`mod twice;`)")
            && problems[1].contains("`other` of grouped (`mod twice;`)"),
        "{}",
        problems[1]
    );
    assert!(
        problems[2].starts_with("test binary `suite` is in 2 packages (grouped, same)"),
        "{}",
        problems[2]
    );
    assert!(
        problems[3].starts_with("loose/Cargo.toml: Cargo makes a test binary of each file")
            && problems[3].contains("autotests = false"),
        "{}",
        problems[3]
    );
}
