//! The usage chart of the HTML export: one bar per turn, input tokens
//! below and output tokens stacked on top, as an inline SVG.
//!
//! In: usage per turn. Out: SVG markup holding only numbers this module
//! formats (no text from the session file), so it needs no escaping; like
//! the page, it references nothing outside itself.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use subagent_protocol::Usage;

/// Height of the usage chart's plot area, px.
const CHART_HEIGHT: u32 = 120;
/// Width of one turn's bar, px, and the gap after it.
const BAR_WIDTH: u32 = 18;
const BAR_GAP: u32 = 6;
/// Room left of the bars for the scale label and below them for turn numbers, px.
const CHART_LEFT: u32 = 48;
const CHART_BOTTOM: u32 = 18;

/// The usage chart: an inline SVG with one `<g class="bar">` per turn
/// (input tokens below, output tokens stacked on top, a `<title>` with the
/// figures), scaled to the largest turn. Turns without usage get an empty
/// bar so the bars line up with the timeline.
pub fn usage_chart(turns: &BTreeMap<u32, Usage>) -> String {
    let max = turns
        .values()
        .map(|u| u.input + u.output)
        .max()
        .unwrap_or(0)
        .max(1);
    let count = u32::try_from(turns.len()).unwrap_or(u32::MAX);
    let width = CHART_LEFT + count.saturating_mul(BAR_WIDTH + BAR_GAP) + BAR_GAP;
    let height = CHART_HEIGHT + CHART_BOTTOM;
    let scale = |tokens: u64| -> u32 {
        // Rounded to whole pixels; a non-zero figure stays visible.
        let px = (tokens as f64 / max as f64 * f64::from(CHART_HEIGHT)).round() as u32;
        if tokens > 0 { px.max(1) } else { 0 }
    };
    let mut svg = format!(
        "<svg id=\"usage-chart\" xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" \
         width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" \
         aria-label=\"tokens per turn\">\
         <line class=\"axis\" x1=\"{CHART_LEFT}\" y1=\"{CHART_HEIGHT}\" x2=\"{width}\" y2=\"{CHART_HEIGHT}\"/>\
         <text class=\"scale\" x=\"{}\" y=\"10\" text-anchor=\"end\">{max}</text>\
         <text class=\"scale\" x=\"{}\" y=\"{CHART_HEIGHT}\" text-anchor=\"end\">0</text>",
        CHART_LEFT - 4,
        CHART_LEFT - 4,
    );
    for (i, (turn, usage)) in turns.iter().enumerate() {
        let i = u32::try_from(i).unwrap_or(u32::MAX);
        let x = CHART_LEFT + BAR_GAP + i.saturating_mul(BAR_WIDTH + BAR_GAP);
        let total = scale(usage.input + usage.output);
        let out_px = scale(usage.output).min(total);
        let in_px = total - out_px;
        let _ = write!(
            svg,
            "<g class=\"bar\" data-turn=\"{turn}\"><title>turn {turn}: {} in, {} out tokens, ${:.4}</title>\
             <rect class=\"input\" x=\"{x}\" y=\"{}\" width=\"{BAR_WIDTH}\" height=\"{in_px}\"/>\
             <rect class=\"output\" x=\"{x}\" y=\"{}\" width=\"{BAR_WIDTH}\" height=\"{out_px}\"/>\
             <text class=\"turn-no\" x=\"{}\" y=\"{}\" text-anchor=\"middle\">{turn}</text></g>",
            usage.input,
            usage.output,
            usage.cost,
            CHART_HEIGHT - in_px,
            CHART_HEIGHT - total,
            x + BAR_WIDTH / 2,
            CHART_HEIGHT + 14,
        );
    }
    svg.push_str("</svg>");
    svg
}
