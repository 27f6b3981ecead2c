//! The built-in tool library (spec §5.4, plus `ask_user` from the design's human-input
//! encoding): tools an implementation supplies by name, so a program declares them without a
//! `body` and is never reported as a prose pointer for doing so.

use crate::program::ToolSurface;

/// One built-in tool: its name, canonical signature and surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Builtin {
    /// The tool's name, as a program spells it.
    pub name: &'static str,
    /// The canonical signature; it wins over a declared `sig` (the body and the call must agree).
    pub sig: &'static str,
    /// Where its effect lands.
    pub surface: BuiltinSurface,
}

/// The surface of a built-in tool (a `Copy` mirror of [`ToolSurface`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BuiltinSurface {
    /// Reads the world.
    Sense,
    /// Writes across the user-interaction line.
    ActArtifact,
}

impl BuiltinSurface {
    /// The model's surface value.
    pub fn to_surface(self) -> ToolSurface {
        match self {
            BuiltinSurface::Sense => ToolSurface::Sense,
            BuiltinSurface::ActArtifact => ToolSurface::ActArtifact,
        }
    }
}

/// The built-in tools, in the order of spec §5.4, then `ask_user`.
pub const BUILTINS: [Builtin; 8] = [
    Builtin {
        name: "read_file",
        sig: "(path) -> str",
        surface: BuiltinSurface::Sense,
    },
    Builtin {
        name: "list_dir",
        sig: "(path) -> str",
        surface: BuiltinSurface::Sense,
    },
    Builtin {
        name: "glob_files",
        sig: "(pattern, path) -> str",
        surface: BuiltinSurface::Sense,
    },
    Builtin {
        name: "grep",
        sig: "(pattern, path) -> str",
        surface: BuiltinSurface::Sense,
    },
    Builtin {
        name: "write_file",
        sig: "(path, content) -> str",
        surface: BuiltinSurface::ActArtifact,
    },
    Builtin {
        name: "run_command",
        sig: "(command) -> str",
        surface: BuiltinSurface::ActArtifact,
    },
    Builtin {
        name: "http_get",
        sig: "(url) -> str",
        surface: BuiltinSurface::Sense,
    },
    Builtin {
        name: "ask_user",
        sig: "(prompt) -> str",
        surface: BuiltinSurface::Sense,
    },
];

/// The built-in tool with this name, if there is one.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The name of the built-in that asks a human (its result is human input, G6).
pub const ASK_USER: &str = "ask_user";
