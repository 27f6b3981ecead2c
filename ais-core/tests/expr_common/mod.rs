//! Shared by the expression tests: a guard and a CODE body checked against a program's carries.

use ais_core::expr::{ExprError, Limits, TypeEnv, compile_guard, compile_str};
use ais_core::{Program, Type};

/// Parses and type-checks a guard against a program (the guard must be a `bool` reading a carry).
pub fn check_guard(p: &Program, guard: &str) -> Result<(), ExprError> {
    let env = TypeEnv::from_program(p);
    compile_guard(&env, guard, &Limits::default()).map(|_| ())
}

/// Parses and type-checks a CODE body against a program; its type.
pub fn check_body(p: &Program, body: &str) -> Result<Type, ExprError> {
    let env = TypeEnv::from_program(p);
    Ok(compile_str(body, &env, &Limits::default())?.ty().clone())
}
