//! Instructions: `id: OPCODE tool(modifiers)(reads) -> writes = body;`, read in named steps
//! (opcode, callee, operands, writes, body, the closing `;`), and the attributes an instruction
//! takes (`#[output(..)]`, `#[verdict(..)]`, `#[cap(..)]`, `#[counter(..)]`, …).

use super::attrs::{Attrs, parse_names};
use super::tokens::{ParseAnyIdent, site_of, tokens_until_semi};
use super::values::parse_type_expr;
use crate::ast::*;
use proc_macro2::{Group, Span, TokenStream};
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Ident, LitStr, Path, Token};

/// The attributes an instruction accepts.
const INSTRUCTION_ATTRS: &[&str] = &[
    "output",
    "autonomy",
    "verdict",
    "cap",
    "counter",
    "concurrency",
    "op",
    "traces_to",
    "model",
    "allow",
];

/// One instruction, its attributes already read (and checked here against the ones it takes).
pub(super) fn parse_instruction(input: ParseStream, attrs: Attrs) -> syn::Result<InstrDef> {
    attrs.only(INSTRUCTION_ATTRS, "an instruction")?;
    let id: Ident = input.parse()?;
    input.parse::<Token![:]>()?;
    let opcode = parse_opcode(input)?;
    let first = parse_group(input)?;
    let callee = parse_callee(input, &opcode)?;
    let second = parse_group(input)?;
    let operands = parse_operands(first, second, callee.is_named())?;
    let writes = parse_writes(input)?;
    let body = parse_body(input)?;
    let last = last_token(&body, &writes, &operands, &callee, &opcode);
    let end = parse_end(input, &id, last)?;
    let output = attrs
        .get("output")
        .map(|a| a.parse_args_with(parse_type_expr))
        .transpose()?;
    let cap = parse_cap(&attrs)?;
    Ok(InstrDef {
        doc: attrs.doc.clone(),
        id: Name::from_ident(&id),
        opcode,
        modifiers: operands.modifiers,
        tool: callee.tool,
        target: callee.target,
        reads: operands.reads,
        reads_span: operands.reads_span,
        writes,
        body,
        output,
        autonomy: attrs.names("autonomy")?,
        verdict: attrs.one_name("verdict")?,
        cap,
        counter: attrs.one_name("counter")?,
        concurrency: attrs.concurrency()?,
        op: attrs.one_name("op")?,
        traces_to: attrs.traces_to()?,
        model: attrs.one_name("model")?,
        allow: attrs.names("allow")?,
        attr_names: attrs
            .other
            .iter()
            .filter_map(|a| a.path().get_ident().map(|i| (i.to_string(), i.span())))
            .collect(),
        end,
    })
}

/// The opcode: identifiers joined by `-` (`GEN-ENUM`), any spelling (the validator judges it).
fn parse_opcode(input: ParseStream) -> syn::Result<OpcodeTok> {
    let first: Ident = input.call(Ident::parse_any_ident).map_err(|e| {
        syn::Error::new(
            e.span(),
            "expected an opcode: GEN-ENUM, GEN-FILL, GEN-EDIT, GEN-RAW, SENSE, ACT, CODE, ROUTE, \
             LOOP, SPAWN, CALL or TERMINAL",
        )
    })?;
    let mut text = first.to_string();
    let mut end = first.span();
    while input.peek(Token![-]) && input.peek2(Ident) {
        input.parse::<Token![-]>()?;
        let next: Ident = input.call(Ident::parse_any_ident)?;
        text.push('-');
        text.push_str(&next.to_string());
        end = next.span();
    }
    Ok(OpcodeTok {
        text,
        site: Site::range(first.span(), end),
    })
}

/// A parenthesised group, if one comes next.
fn parse_group(input: ParseStream) -> syn::Result<Option<Group>> {
    if input.peek(syn::token::Paren) {
        Ok(Some(input.parse::<Group>()?))
    } else {
        Ok(None)
    }
}

/// What the instruction runs: a tool by name, or for a CALL a program path or `"file.agir"`.
struct Callee {
    tool: Option<Name>,
    target: Option<(CallTarget, Site)>,
}

impl Callee {
    /// Whether the instruction names a tool or target, so that one `(..)` after the opcode
    /// holds its modifiers and not its reads.
    fn is_named(&self) -> bool {
        self.tool.is_some() || self.target.is_some()
    }
}

/// The tool or CALL target after the opcode (and its modifiers), if any.
fn parse_callee(input: ParseStream, opcode: &OpcodeTok) -> syn::Result<Callee> {
    let mut callee = Callee {
        tool: None,
        target: None,
    };
    if opcode.text == "CALL" && input.peek(LitStr) {
        let lit: LitStr = input.parse()?;
        let span = lit.span();
        callee.target = Some((CallTarget::File(lit), Site::one(span)));
    } else if input.peek(Ident) {
        if opcode.text == "CALL" {
            let path: Path = input.parse()?;
            let first_span = path
                .segments
                .first()
                .map_or(path.span(), |s| s.ident.span());
            let last_span = path.segments.last().map_or(path.span(), |s| s.ident.span());
            callee.target = Some((
                CallTarget::Program(path),
                Site::range(first_span, last_span),
            ));
        } else {
            let t: Ident = input.parse()?;
            callee.tool = Some(Name::from_ident(&t));
        }
    }
    Ok(callee)
}

/// The instruction's modifiers `(code)` and reads `(task, note)`.
struct Operands {
    modifiers: Vec<Modifier>,
    reads: Vec<Name>,
    reads_span: Option<Span>,
}

/// Tells the two `(..)` groups apart and reads the names in each: two groups are modifiers
/// then reads; one group is the modifiers when a tool or target sits between the opcode and
/// it (`ACT(artifact) save`), else the reads (`GEN-RAW(task)`).
fn parse_operands(
    first: Option<Group>,
    second: Option<Group>,
    named: bool,
) -> syn::Result<Operands> {
    let (mods, reads) = match (first, second) {
        (Some(m), Some(r)) => (Some(m), Some(r)),
        (Some(g), None) if named => (Some(g), None),
        (Some(g), None) => (None, Some(g)),
        (None, r) => (None, r),
    };
    let modifiers = match &mods {
        Some(g) => parse_names
            .parse2(g.stream())?
            .into_iter()
            .map(|name| Modifier { name })
            .collect(),
        None => Vec::new(),
    };
    let reads_span = reads.as_ref().map(Group::span);
    let reads = match &reads {
        Some(g) => parse_names.parse2(g.stream())?,
        None => Vec::new(),
    };
    Ok(Operands {
        modifiers,
        reads,
        reads_span,
    })
}

/// `-> write` or `-> (a, b)`, if an arrow comes next.
fn parse_writes(input: ParseStream) -> syn::Result<Vec<Name>> {
    if !input.peek(Token![->]) {
        return Ok(Vec::new());
    }
    input.parse::<Token![->]>()?;
    if input.peek(syn::token::Paren) {
        let g: Group = input.parse()?;
        parse_names.parse2(g.stream())
    } else {
        let w: Ident = input.parse()?;
        Ok(vec![Name::from_ident(&w)])
    }
}

/// A CODE body `= expression`: its tokens up to the `;`, and their site.
fn parse_body(input: ParseStream) -> syn::Result<Option<(TokenStream, Site)>> {
    if !input.peek(Token![=]) {
        return Ok(None);
    }
    let eq: Token![=] = input.parse()?;
    let tokens = tokens_until_semi(input)?;
    let site = site_of(&tokens).unwrap_or(Site::one(eq.span));
    Ok(Some((tokens, site)))
}

/// The instruction's last token before its `;`, and how to name it in an error.
fn last_token(
    body: &Option<(TokenStream, Site)>,
    writes: &[Name],
    operands: &Operands,
    callee: &Callee,
    opcode: &OpcodeTok,
) -> (Span, String) {
    match (body, writes.last()) {
        (Some((_, site)), _) => (site.end, "the body".to_owned()),
        (None, Some(w)) => (w.span, format!("`{}`", w.text)),
        (None, None) => match (operands.reads_span, &callee.tool) {
            (Some(span), _) => (span, "the operands".to_owned()),
            (None, Some(t)) => (t.span, format!("`{}`", t.text)),
            (None, None) => (opcode.site.end, format!("`{}`", opcode.text)),
        },
    }
}

/// The closing `;`. A missing one is reported at the instruction's last token, not at
/// whatever follows it (usually the next instruction's id, a line further down).
fn parse_end(
    input: ParseStream,
    id: &Ident,
    (last_span, last_text): (Span, String),
) -> syn::Result<Span> {
    let semi = input.parse::<Token![;]>().map_err(|_| {
        syn::Error::new(
            last_span,
            format!(
                "expected `;` after {last_text} to end the instruction `{id}` \
                 (`id: OPCODE tool(reads) -> writes;`)"
            ),
        )
    })?;
    Ok(semi.span)
}

/// `#[cap(3)]`: the bound on a LOOP's rounds, with its span.
fn parse_cap(attrs: &Attrs) -> syn::Result<Option<(i64, Span)>> {
    attrs
        .get("cap")
        .map(|a| {
            a.parse_args::<syn::LitInt>()
                .and_then(|l| Ok((l.base10_parse::<i64>()?, l.span())))
        })
        .transpose()
}
