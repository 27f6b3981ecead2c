//! Artifact writes stay under the output root: absolute paths, `..` (also hidden inside a
//! value), symlinked directories and symlinked files never pick a destination; writes are
//! atomic and leave no temporary file behind.

use ais_core::Value;
use ais_rt::{ArtifactPath, ArtifactRoot, ToolArgs, ToolContext, ToolErrorKind, ToolRegistry};
use std::os::unix::fs::symlink;
use std::path::Path;

fn setup() -> (tempfile::TempDir, ArtifactRoot) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("root")).unwrap();
    std::fs::create_dir_all(dir.path().join("outside")).unwrap();
    let root = ArtifactRoot::new(dir.path().join("root"));
    (dir, root)
}

/// Every file under `dir`, relative, sorted (hidden ones included).
fn files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walk(dir, dir);
    out.sort();
    out
}

fn walk(base: &Path, dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let ty = entry.file_type().unwrap();
        if ty.is_dir() {
            out.extend(walk(base, &path));
        } else {
            out.push(
                path.strip_prefix(base)
                    .unwrap()
                    .to_string_lossy()
                    .into_owned(),
            );
        }
    }
    out
}

#[test]
fn a_relative_path_is_written_atomically_and_replaces_the_old_file() {
    let (dir, root) = setup();
    assert_eq!(root.write("a/b/c.md", b"one").unwrap(), "a/b/c.md");
    assert_eq!(root.write("./a/b//c.md", b"two").unwrap(), "a/b/c.md");
    let root_dir = dir.path().join("root");
    assert_eq!(
        std::fs::read_to_string(root_dir.join("a/b/c.md")).unwrap(),
        "two"
    );
    assert_eq!(
        files(&root_dir),
        vec!["a/b/c.md"],
        "a temporary file was left behind"
    );
}

#[test]
fn an_absolute_path_never_picks_a_destination() {
    let (dir, root) = setup();
    let target = dir.path().join("outside/abs.txt");
    let err = root.write(&target.to_string_lossy(), b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape);
    assert!(err.message.contains("absolute"), "{}", err.message);
    assert!(!target.exists());
    assert!(files(&dir.path().join("root")).is_empty());
}

#[test]
fn dot_dot_never_picks_a_destination_even_hidden_inside_a_value() {
    let (dir, root) = setup();
    for raw in [
        "../outside/x.txt",
        "notes/../../outside/x.txt",
        "notes/./../../../outside/x.txt",
        "notes/..",
        "a/b/../../../outside/x.txt",
    ] {
        let err = root.write(raw, b"x").unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathEscape, "{raw}");
        assert!(err.message.contains(".."), "{raw}: {}", err.message);
    }
    assert!(files(&dir.path().join("outside")).is_empty());
    assert!(files(&dir.path().join("root")).is_empty());
}

#[test]
fn a_symlinked_directory_is_not_followed() {
    let (dir, root) = setup();
    symlink(dir.path().join("outside"), dir.path().join("root/link")).unwrap();
    let err = root.write("link/x.txt", b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape);
    assert!(err.message.contains("symbolic link"), "{}", err.message);
    // Deeper too: a real directory, then a link.
    std::fs::create_dir(dir.path().join("root/real")).unwrap();
    symlink(
        dir.path().join("outside"),
        dir.path().join("root/real/deeper"),
    )
    .unwrap();
    let err = root.write("real/deeper/sub/x.txt", b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape);
    assert!(files(&dir.path().join("outside")).is_empty());
}

#[test]
fn a_symlinked_file_is_neither_written_through_nor_replaced() {
    let (dir, root) = setup();
    let victim = dir.path().join("outside/victim.txt");
    std::fs::write(&victim, "original").unwrap();
    symlink(&victim, dir.path().join("root/report.md")).unwrap();
    let err = root.write("report.md", b"overwritten").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "original");
    assert!(
        std::fs::symlink_metadata(dir.path().join("root/report.md"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // A dangling link is refused the same way (it would otherwise create the target).
    symlink(
        dir.path().join("outside/new.txt"),
        dir.path().join("root/dangling"),
    )
    .unwrap();
    let err = root.write("dangling", b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::PathEscape);
    assert!(!dir.path().join("outside/new.txt").exists());
}

#[test]
fn a_failed_write_leaves_no_temporary_file() {
    let (dir, root) = setup();
    std::fs::create_dir(dir.path().join("root/taken")).unwrap();
    let err = root.write("taken", b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
    assert!(files(&dir.path().join("root")).is_empty());
    // A file standing where a directory must go.
    std::fs::write(dir.path().join("root/file"), "x").unwrap();
    let err = root.write("file/inside.txt", b"x").unwrap_err();
    assert_eq!(err.kind, ToolErrorKind::Io);
    assert_eq!(files(&dir.path().join("root")), vec!["file"]);
}

#[tokio::test]
async fn a_private_write_siblings_relative_writes_land_in_its_scratch() {
    let (dir, _) = setup();
    let mut ctx = ToolContext::new(dir.path().join("root"));
    ctx.scratch = Some(dir.path().join("scratch/sibling-2"));
    let registry = ToolRegistry::with_builtins();
    let mut args = ToolArgs::default();
    args.params.insert("path".into(), "out.md".into());
    args.params.insert("content".into(), "mine".into());
    let got = registry
        .get("write_file")
        .unwrap()
        .call(args, &ctx)
        .await
        .unwrap();
    assert_eq!(got, Value::from("out.md"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("scratch/sibling-2/out.md")).unwrap(),
        "mine"
    );
    assert!(!dir.path().join("root/out.md").exists());
    // And a native tool's ArtifactPath resolves there too.
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "save",
        &["text", "path"],
        |text: String, path: ArtifactPath| path.write(text),
    );
    let mut args = ToolArgs::default();
    args.params.insert("text".into(), "native".into());
    args.params.insert("path".into(), "n/native.md".into());
    let got = tools.get("save").unwrap().call(args, &ctx).await.unwrap();
    assert_eq!(got, Value::from("n/native.md"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("scratch/sibling-2/n/native.md")).unwrap(),
        "native"
    );
}

#[tokio::test]
async fn a_model_produced_escape_reaches_a_native_tool_as_a_routable_error() {
    let (dir, _) = setup();
    let ctx = ToolContext::new(dir.path().join("root"));
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "save",
        &["text", "path"],
        |text: String, path: ArtifactPath| path.write(text),
    );
    for raw in ["/etc/cron.d/x", "../../x", "ok/../../x"] {
        let mut args = ToolArgs::default();
        args.params.insert("text".into(), "x".into());
        args.params.insert("path".into(), raw.into());
        let err = tools
            .get("save")
            .unwrap()
            .call(args, &ctx)
            .await
            .unwrap_err();
        assert_eq!(err.kind, ToolErrorKind::PathEscape, "{raw}");
        assert!(err.message.contains("parameter `path`"), "{}", err.message);
    }
}
