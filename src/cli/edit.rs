//! `ais edit VERB [JSON]` and `ais mcp edit --root DIR`: the semantic edit language
//! (`ais_edit`) on the command line and as an MCP server.

use super::{CliError, CmdResult, Output, Status};
use std::io::{Read, Write};
use std::path::PathBuf;

/// Arguments of `ais edit`.
#[derive(Debug, clap::Args)]
pub struct EditArgs {
    /// The verb: `status`, `help`, `query`, `view`, `patch`, or a sugar verb (`rename`,
    /// `set_doc`, `set_guard`, `insert_between`, `set_body`, `add_edge`, `remove_edge`,
    /// `delete_instruction`).
    pub verb: String,
    /// The verb's arguments as a JSON object (`ais edit help` shows each verb's schema); `-`
    /// reads them from standard input; left out, `{}`.
    pub args: Option<String>,
    /// The directory the files named in the arguments are relative to (and confined to).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

/// Arguments of `ais mcp edit`.
#[derive(Debug, clap::Args)]
pub struct EditServeArgs {
    /// The directory whose `.agir` programs the tools edit (files outside it are refused).
    #[arg(long, default_value = ".")]
    pub root: PathBuf,
}

fn editor(root: &PathBuf) -> Result<ais::edit::Editor, CliError> {
    ais::edit::Editor::new(root).map_err(|e| {
        CliError::new(
            format!("cannot use `{}` as the root: {e}", root.display()),
            "name an existing directory with `--root DIR`",
        )
    })
}

/// Runs `ais edit`: the answer (JSON) on stdout; exit 0 when it is `ok`, 1 when rejected.
pub fn run(args: &EditArgs, o: &mut Output) -> CmdResult {
    let editor = editor(&args.root)?;
    let text = match args.args.as_deref() {
        None => "{}".to_owned(),
        Some("-") => {
            let mut buf = String::new();
            let limit = ais::edit::MAX_REQUEST_BYTES as u64 + 1;
            std::io::stdin()
                .take(limit)
                .read_to_string(&mut buf)
                .map_err(|e| {
                    CliError::new(
                        format!("cannot read the arguments from standard input: {e}"),
                        "pipe a JSON object (UTF-8) into `ais edit VERB -`",
                    )
                })?;
            buf
        }
        Some(t) => t.to_owned(),
    };
    let answer = editor.call_text(&args.verb, &text);
    let pretty = serde_json::to_string_pretty(&answer).unwrap_or_default();
    writeln!(o.out, "{pretty}")?;
    o.out.flush()?;
    Ok(if answer["status"] == "ok" {
        Status::Ok
    } else {
        Status::Findings
    })
}

/// `ais mcp edit`: serves until the client closes standard input; holds no stdout lock.
pub fn serve_main(args: &EditServeArgs) -> std::process::ExitCode {
    let fail = |what: String| {
        eprintln!("error: {what}");
        std::process::ExitCode::from(Status::Failed.code())
    };
    let editor = match editor(&args.root) {
        Ok(e) => e,
        Err(e) => return fail(e.what),
    };
    let tokio = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(t) => t,
        Err(e) => return fail(format!("cannot start the async runtime: {e}")),
    };
    match tokio.block_on(ais::edit::mcp::EditServer::new(editor).serve_stdio()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}
