//! The report page. Everything from the run is hostile text: it reaches the page only through
//! [`esc`], and the page declares a Content-Security-Policy that allows no script, no fetch
//! and no image but inline data, so even a mistake here could not load or run anything.

use super::{Event, RunRecord};
use ais::graph::Graph;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The most characters of one value (a request, a response, an operand) the page shows.
const MAX_VALUE: usize = 16 * 1024;
/// The most characters of a tool's output shown.
const MAX_TOOL: usize = 4 * 1024;

/// Text made safe for HTML element content and quoted attribute values (the one escaping every
/// page of the CLI uses: the run report and the compliance certificate).
pub(crate) fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() && c != '\n' && c != '\t' => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to `max` characters, saying how much was left out.
fn bounded(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(max).collect();
    let _ = write!(cut, "\n… ({} more characters not shown)", n - max);
    cut
}

/// A JSON value pretty-printed, bounded and escaped (a string shows as its text).
fn value(v: &serde_json::Value, max: usize) -> String {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        other => serde_json::to_string_pretty(other).unwrap_or_default(),
    };
    esc(&bounded(&text, max))
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#0f172a}\
h1{font-size:20px}h2{font-size:16px;margin-top:28px}\
table{border-collapse:collapse;width:100%}th,td{border:1px solid #cbd5e1;padding:4px 8px;text-align:left;vertical-align:top}\
th{background:#f1f5f9}td.n{text-align:right;font-variant-numeric:tabular-nums}\
tr.model td:nth-child(4){color:#7c3aed}tr.code td:nth-child(4){color:#0369a1}tr.failed{background:#fef2f2}\
pre{white-space:pre-wrap;word-break:break-word;background:#f8fafc;border:1px solid #e2e8f0;padding:8px;max-height:480px;overflow:auto}\
details{margin:6px 0}summary{cursor:pointer}.box{border-left:4px solid #b45309;background:#fffbeb;padding:8px 12px}\
.fault{border-color:#dc2626;background:#fef2f2}.path span{background:#fde68a;border-radius:4px;padding:1px 6px;margin:2px;display:inline-block}\
.graph svg{max-width:100%;height:auto}";

/// The opening of a page up to `<body>`: the Content-Security-Policy that allows no script, no
/// fetch and no image but inline data, the title (escaped) and the style (the one head every
/// page of the CLI has).
pub(crate) fn head(h: &mut String, title: &str) {
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n",
        esc(title)
    );
}

/// The whole page.
pub(super) fn page(r: &RunRecord, graph: Option<&Graph>, prices: Option<(f64, f64)>) -> String {
    let mut h = String::with_capacity(64 * 1024);
    head(&mut h, &format!("ais run report: {}", r.name));
    let _ = writeln!(h, "<h1>Run report: {}</h1>", esc(&r.name));
    summary(&mut h, r);
    outcome(&mut h, r);
    path(&mut h, r, graph);
    steps(&mut h, r);
    slots(&mut h, r);
    tools(&mut h, r);
    totals(&mut h, r, prices);
    h.push_str("</body></html>\n");
    h
}

fn main_events(r: &RunRecord) -> impl Iterator<Item = &Event> {
    r.events.iter().filter(|e| e.is_own())
}

fn summary(h: &mut String, r: &RunRecord) {
    let steps = main_events(r).count();
    let us: u64 = main_events(r).map(|e| e.elapsed_us).sum();
    let scripted = r
        .events
        .iter()
        .any(|e| e.slot.as_ref().is_some_and(|s| s.scripted));
    let status = r
        .outcome
        .as_ref()
        .and_then(|o| o["status"].as_str())
        .unwrap_or("unknown (no outcome given)");
    let _ = writeln!(
        h,
        "<p id=\"summary\">Status <b id=\"status\">{}</b> · {steps} steps · {:.1} ms in steps{}</p>",
        esc(status),
        us as f64 / 1000.0,
        if scripted {
            " · <b>scripted model</b>"
        } else {
            ""
        }
    );
}

fn outcome(h: &mut String, r: &RunRecord) {
    let o = r.outcome.as_ref();
    if let Some(f) = o.map(|o| &o["fault"]).filter(|f| !f.is_null()) {
        let _ = writeln!(
            h,
            "<div class=\"box fault\" id=\"fault\"><b>Fault</b> {} at <code>{}</code>: {}</div>",
            value(&f["kind"], 200),
            value(&f["instruction"], 200),
            value(&f["message"], MAX_VALUE)
        );
    } else if let Some(last) = r.events.last().filter(|e| e.error.is_some() && o.is_none()) {
        let _ = writeln!(
            h,
            "<div class=\"box fault\" id=\"fault\"><b>The last step failed</b> at <code>{}</code>: {}</div>",
            esc(&last.instruction),
            esc(&bounded(
                last.error.as_deref().unwrap_or_default(),
                MAX_VALUE
            ))
        );
    }
    if let Some(p) = o.map(|o| &o["pause"]).filter(|p| !p.is_null()) {
        let _ = writeln!(
            h,
            "<div class=\"box\" id=\"pause\"><b>Paused</b> for <code>{}</code>: {}</div>",
            value(&p["carry"], 200),
            value(&p["prompt"], MAX_VALUE)
        );
    }
    let deviations = o
        .and_then(|o| o["deviations"].as_array())
        .cloned()
        .unwrap_or_default();
    if !deviations.is_empty() {
        h.push_str("<h2>Deviations</h2><ul id=\"deviations\">");
        for d in &deviations {
            let _ = write!(h, "<li>{}</li>", value(d, 2000));
        }
        h.push_str("</ul>\n");
    }
}

/// The graph with the path highlighted, and the path as a row of ids.
fn path(h: &mut String, r: &RunRecord, graph: Option<&Graph>) {
    let ids: Vec<&str> = main_events(r).map(|e| e.instruction.as_str()).collect();
    h.push_str("<h2>Path</h2><p class=\"path\" id=\"path\">");
    for id in &ids {
        let _ = write!(h, "<span>{}</span>", esc(id));
    }
    h.push_str("</p>\n");
    let Some(g) = graph else {
        h.push_str("<p>(give <code>--program FILE.agir</code> to draw the graph)</p>\n");
        return;
    };
    let taken: Vec<bool> = g
        .nodes
        .iter()
        .map(|n| n.kind == ais::graph::NodeKind::Instruction && ids.contains(&n.id.as_str()))
        .collect();
    match g.svg_highlighted(&taken) {
        Ok(svg) => {
            let svg = svg.find("<svg").map_or(svg.as_str(), |i| &svg[i..]);
            let _ = writeln!(h, "<div class=\"graph\" id=\"graph\">{svg}</div>");
        }
        Err(e) => {
            let _ = writeln!(
                h,
                "<p class=\"graph\" id=\"graph\">({})</p>",
                esc(&e.to_string())
            );
        }
    }
}

fn tokens(e: &Event) -> (u64, u64) {
    e.slot.as_ref().map_or((0, 0), |s| {
        (s.usage.prompt_tokens, s.usage.completion_tokens)
    })
}

fn steps(h: &mut String, r: &RunRecord) {
    h.push_str(
        "<h2>Steps</h2><table id=\"steps\"><thead><tr><th>step</th><th>instruction</th><th>opcode</th>\
         <th>unit</th><th>time (ms)</th><th>tokens in</th><th>tokens out</th><th>tool</th><th>error</th></tr></thead><tbody>\n",
    );
    // Each step before its sub-steps (a SPAWN's siblings, a CALLed program's steps, which end
    // before it does), in step order: the row order is the steps' numbering.
    let mut rows: Vec<(usize, &Event)> = r.events.iter().enumerate().collect();
    rows.sort_by_cached_key(|(_, e)| {
        let mut at = vec![e.step];
        at.extend(&e.sub);
        at.extend(e.sibling.map(|i| i as u64 + 1));
        at
    });
    for (k, e) in rows {
        let (i, o) = tokens(e);
        let step = ais::rt::trace::step_label(e.step, &e.sub, e.sibling);
        let _ = writeln!(
            h,
            "<tr id=\"event-{k}\" class=\"{}{}\"><td class=\"n\">{}</td><td><code>{}</code></td><td>{}</td><td>{}</td>\
             <td class=\"n\">{:.2}</td><td class=\"n\">{i}</td><td class=\"n\">{o}</td><td>{}</td><td>{}</td></tr>",
            if e.unit == "model" { "model" } else { "code" },
            if e.error.is_some() { " failed" } else { "" },
            esc(&step),
            esc(&e.instruction),
            esc(&e.opcode),
            esc(&e.unit),
            e.elapsed_us as f64 / 1000.0,
            esc(e.tool.as_deref().unwrap_or("")),
            esc(&bounded(e.error.as_deref().unwrap_or(""), 2000)),
        );
    }
    h.push_str("</tbody></table>\n");
}

fn slots(h: &mut String, r: &RunRecord) {
    let with_slots: Vec<(usize, &Event)> = r
        .events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.slot.is_some())
        .collect();
    if with_slots.is_empty() {
        return;
    }
    h.push_str("<h2>Slots</h2>\n");
    for (k, e) in with_slots {
        let Some(s) = &e.slot else { continue };
        let _ = writeln!(
            h,
            "<details class=\"slot\" id=\"slot-{k}\"><summary>step {} <code>{}</code>{} — {} · {} exchange(s), {} repair(s), {} tool round(s)</summary>",
            ais::rt::trace::step_label(e.step, &e.sub, e.sibling),
            esc(&e.instruction),
            match (e.sibling, e.sub.is_empty()) {
                (Some(_), _) => " (SPAWN sibling)",
                (None, false) => " (in a CALLed program)",
                (None, true) => "",
            },
            esc(&answered(s)),
            s.exchanges.len().max(s.recorded),
            s.repairs,
            s.tool_rounds
        );
        for f in &s.failovers {
            let why = if f.reason.is_empty() {
                String::new()
            } else {
                format!(": {}", esc(&bounded(&f.reason, 2000)))
            };
            let _ = writeln!(
                h,
                "<p class=\"failover\">failover from <code>{}</code> to <code>{}</code>{why}</p>",
                esc(&f.from),
                esc(&f.to)
            );
        }
        for (x, ex) in s.exchanges.iter().enumerate() {
            let _ = writeln!(
                h,
                "<h3>Exchange {}</h3><p>Request</p><pre class=\"request\">{}</pre><p>Response</p><pre class=\"response\">{}</pre>",
                x + 1,
                value(&ex.request, MAX_VALUE),
                value(&ex.response, MAX_VALUE)
            );
        }
        if s.exchanges.is_empty() && s.recorded > 0 {
            h.push_str("<p class=\"note\">This journal (of an older ais) kept the slot's value, not its exchanges; run with <code>--trace FILE</code> to see them.</p>\n");
        }
        if let Some(p) = &s.parsed {
            let _ = writeln!(
                h,
                "<p>Value that landed</p><pre class=\"parsed\">{}</pre>",
                value(p, MAX_VALUE)
            );
        }
        h.push_str("</details>\n");
    }
}

/// Which model answered a slot, its tier and what it cost: `openai:m (tier small) · $0.0012`.
fn answered(s: &super::SlotEvent) -> String {
    let mut t = s.model.clone();
    if !s.tier.is_empty() {
        t += &format!(" (tier {})", s.tier);
    }
    if let Some(c) = s.cost {
        t += &format!(" · ${c:.4}");
    }
    t
}

fn tools(h: &mut String, r: &RunRecord) {
    let calls: Vec<&Event> = r.events.iter().filter(|e| e.tool.is_some()).collect();
    if calls.is_empty() {
        return;
    }
    h.push_str("<h2>Tool calls</h2>\n");
    for e in calls {
        let _ = write!(
            h,
            "<details class=\"tool\"><summary>step {} <code>{}</code>: <code>{}</code></summary><p>Arguments</p><pre>",
            ais::rt::trace::step_label(e.step, &e.sub, e.sibling),
            esc(&e.instruction),
            esc(e.tool.as_deref().unwrap_or_default())
        );
        for (name, v) in &e.operands {
            let _ = writeln!(h, "{} = {}", esc(name), value(v, MAX_TOOL));
        }
        h.push_str("</pre><p>Output</p><pre class=\"output\">");
        for (name, v) in &e.written {
            let _ = writeln!(h, "{} = {}", esc(name), value(v, MAX_TOOL));
        }
        if let Some(err) = &e.error {
            let _ = writeln!(h, "error: {}", esc(&bounded(err, MAX_TOOL)));
        }
        h.push_str("</pre></details>\n");
    }
}

/// The totals per slot and in all: fills, tokens, and the cost — the one the run recorded
/// (its models' prices), else, with `--price-in`/`--price-out`, the tokens at those prices.
fn totals(h: &mut String, r: &RunRecord, prices: Option<(f64, f64)>) {
    let mut per: BTreeMap<&str, (u64, u64, u64, Option<f64>)> = BTreeMap::new();
    let slots = r.events.iter().filter_map(|e| Some((e, e.slot.as_ref()?)));
    for (e, s) in slots.clone() {
        let (i, o) = tokens(e);
        let t = per.entry(e.instruction.as_str()).or_default();
        let cost = match (t.3, s.cost) {
            (None, None) => None,
            (a, b) => Some(a.unwrap_or(0.0) + b.unwrap_or(0.0)),
        };
        *t = (t.0 + 1, t.1 + i, t.2 + o, cost);
    }
    let recorded = slots.clone().any(|(_, s)| s.cost.is_some());
    let cost = |i: u64, o: u64, c: Option<f64>| {
        if recorded {
            return c.map_or_else(|| "-".to_owned(), |c| format!("{c:.4}"));
        }
        prices.map_or(String::new(), |(pi, po)| {
            format!("{:.4}", (i as f64 * pi + o as f64 * po) / 1_000_000.0)
        })
    };
    let shown = recorded || prices.is_some();
    let _ = write!(
        h,
        "<h2>Totals</h2><table id=\"totals\"><thead><tr><th>slot</th><th>fills</th><th>tokens in</th><th>tokens out</th>{}</tr></thead><tbody>",
        if shown { "<th>cost ($)</th>" } else { "" }
    );
    let (mut fi, mut ti, mut to, mut tc) = (0, 0, 0, None::<f64>);
    for (id, (n, i, o, c)) in &per {
        fi += n;
        ti += i;
        to += o;
        if let Some(c) = c {
            tc = Some(tc.unwrap_or(0.0) + c);
        }
        let c = if shown {
            format!("<td class=\"n\">{}</td>", cost(*i, *o, *c))
        } else {
            String::new()
        };
        let _ = write!(
            h,
            "<tr><td><code>{}</code></td><td class=\"n\">{n}</td><td class=\"n\">{i}</td><td class=\"n\">{o}</td>{c}</tr>",
            esc(id)
        );
    }
    let c = if shown {
        format!("<td class=\"n\" id=\"cost\">{}</td>", cost(ti, to, tc))
    } else {
        String::new()
    };
    let _ = writeln!(
        h,
        "<tr id=\"total\"><th>all</th><td class=\"n\">{fi}</td><td class=\"n\">{ti}</td><td class=\"n\">{to}</td>{c}</tr></tbody></table>"
    );
}
