//! Rows of the benchmark report: one figure beside its baseline, the ratio
//! between them, the target from issue 12 / BENCHMARKS.md, and whether the
//! figure meets it. Printed as a table and, with `--json`, written as one
//! JSON document so two runs can be compared.
//!
//! This module only formats and judges; it measures nothing.

use serde_json::{Value, json};

/// Distribution of one measurement's samples.
#[derive(Debug, Clone)]
pub struct Stats {
    pub n: usize,
    pub min: f64,
    pub median: f64,
    pub p95: f64,
    pub max: f64,
}

impl Stats {
    /// Summarises `samples` (at least one).
    pub fn of(samples: &[f64]) -> Stats {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        if s.is_empty() {
            s.push(f64::NAN);
        }
        let pick = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
        Stats {
            n: samples.len(),
            min: pick(0.0),
            median: pick(0.5),
            p95: pick(0.95),
            max: pick(1.0),
        }
    }
}

/// What the figure must meet.
#[derive(Debug, Clone)]
pub enum Target {
    /// No target: reported for the record.
    Report,
    /// figure <= value (in the row's unit).
    AtMost(f64),
    /// figure >= value.
    AtLeast(f64),
    /// figure / baseline <= value.
    RatioAtMost(f64),
    /// figure / baseline >= value.
    RatioAtLeast(f64),
    /// figure - baseline <= value (in the row's unit).
    OverBaselineAtMost(f64),
    /// Every one of these.
    All(Vec<Target>),
}

impl Target {
    fn describe(&self, unit: &str) -> String {
        match self {
            Target::Report => "-".into(),
            Target::AtMost(v) => format!("<= {} {unit}", fmt_num(*v)),
            Target::AtLeast(v) => format!(">= {} {unit}", fmt_num(*v)),
            Target::RatioAtMost(v) => format!("<= {}x", fmt_num(*v)),
            Target::RatioAtLeast(v) => format!(">= {}x", fmt_num(*v)),
            Target::OverBaselineAtMost(v) => format!("<= +{} {unit}", fmt_num(*v)),
            Target::All(all) => all
                .iter()
                .map(|t| t.describe(unit))
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    fn met(&self, figure: f64, baseline: Option<f64>) -> Option<bool> {
        let ratio = baseline.map(|b| figure / b);
        match self {
            Target::Report => None,
            Target::AtMost(v) => Some(figure <= *v),
            Target::AtLeast(v) => Some(figure >= *v),
            Target::RatioAtMost(v) => Some(ratio.is_some_and(|r| r <= *v)),
            Target::RatioAtLeast(v) => Some(ratio.is_some_and(|r| r >= *v)),
            Target::OverBaselineAtMost(v) => Some(baseline.is_some_and(|b| figure - b <= *v)),
            Target::All(all) => {
                let verdicts: Vec<_> = all.iter().filter_map(|t| t.met(figure, baseline)).collect();
                (!verdicts.is_empty()).then(|| verdicts.iter().all(|v| *v))
            }
        }
    }
}

/// The baseline a figure is compared with, measured in the same run.
#[derive(Debug, Clone)]
pub struct Baseline {
    pub name: String,
    pub figure: f64,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Row {
    /// Stable key for comparing runs (`spawn.sandbox_cgroup`).
    pub id: String,
    pub name: String,
    pub unit: &'static str,
    /// The figure judged (a median unless the name says otherwise).
    pub figure: f64,
    pub stats: Option<Stats>,
    pub baseline: Option<Baseline>,
    pub target: Target,
    /// What else a reader needs (an RSS curve, the bound when a target is
    /// not met).
    pub note: Option<String>,
}

impl Row {
    /// A row whose figure is the median of `samples`.
    pub fn timed(id: &str, name: &str, unit: &'static str, samples: &[f64]) -> Row {
        let stats = Stats::of(samples);
        Row {
            id: id.into(),
            name: name.into(),
            unit,
            figure: stats.median,
            stats: Some(stats),
            baseline: None,
            target: Target::Report,
            note: None,
        }
    }

    /// A row with a single figure.
    pub fn single(id: &str, name: &str, unit: &'static str, figure: f64) -> Row {
        Row {
            id: id.into(),
            name: name.into(),
            unit,
            figure,
            stats: None,
            baseline: None,
            target: Target::Report,
            note: None,
        }
    }

    pub fn against(mut self, name: &str, figure: f64) -> Row {
        self.baseline = Some(Baseline {
            name: name.into(),
            figure,
        });
        self
    }

    /// Compares with another row's figure.
    pub fn against_row(self, other: &Row) -> Row {
        let (name, figure) = (other.name.clone(), other.figure);
        self.against(&name, figure)
    }

    pub fn target(mut self, target: Target) -> Row {
        self.target = target;
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Row {
        self.note = Some(note.into());
        self
    }

    pub fn note_if(self, cond: bool, note: impl Into<String>) -> Row {
        if cond { self.note(note) } else { self }
    }

    pub fn ratio(&self) -> Option<f64> {
        self.baseline.as_ref().map(|b| self.figure / b.figure)
    }

    /// Some(true) met, Some(false) missed, None: no target.
    pub fn verdict(&self) -> Option<bool> {
        self.target
            .met(self.figure, self.baseline.as_ref().map(|b| b.figure))
    }

    fn verdict_word(&self) -> &'static str {
        match self.verdict() {
            Some(true) => "pass",
            Some(false) => "FAIL",
            None => "info",
        }
    }

    fn spread(&self) -> String {
        self.stats.as_ref().map_or_else(String::new, |s| {
            format!(
                " (n {}, min {}, p95 {})",
                s.n,
                fmt_num(s.min),
                fmt_num(s.p95)
            )
        })
    }

    pub fn json(&self) -> Value {
        json!({
            "id": self.id,
            "name": self.name,
            "unit": self.unit,
            "figure": self.figure,
            "stats": self.stats.as_ref().map(|s| json!({
                "n": s.n, "min": s.min, "median": s.median, "p95": s.p95, "max": s.max,
            })),
            "baseline": self.baseline.as_ref().map(|b| json!({"name": b.name, "figure": b.figure})),
            "ratio": self.ratio(),
            "target": self.target.describe(self.unit),
            "verdict": self.verdict_word(),
            "note": self.note,
        })
    }
}

/// Prints `rows` as a Markdown table, then the notes.
pub fn print_table(rows: &[Row]) {
    println!("| row | figure | baseline | ratio | target | result |");
    println!("|---|---|---|---|---|---|");
    for row in rows {
        let baseline = row.baseline.as_ref().map_or_else(
            || "-".to_owned(),
            |b| format!("{}: {} {}", b.name, fmt_num(b.figure), row.unit),
        );
        let ratio = row
            .ratio()
            .map_or_else(|| "-".to_owned(), |r| format!("{r:.2}x"));
        println!(
            "| {} `{}` | {} {}{} | {} | {} | {} | {} |",
            row.name,
            row.id,
            fmt_num(row.figure),
            row.unit,
            row.spread(),
            baseline,
            ratio,
            row.target.describe(row.unit),
            row.verdict_word()
        );
    }
    let notes: Vec<_> = rows
        .iter()
        .filter_map(|r| r.note.as_ref().map(|n| (r, n)))
        .collect();
    if !notes.is_empty() {
        println!();
        for (row, note) in notes {
            println!("- `{}`: {note}", row.id);
        }
    }
    let failed: Vec<_> = rows
        .iter()
        .filter(|r| r.verdict() == Some(false))
        .map(|r| r.id.as_str())
        .collect();
    println!();
    println!(
        "{} rows, {} with a target, {} missed{}",
        rows.len(),
        rows.iter().filter(|r| r.verdict().is_some()).count(),
        failed.len(),
        if failed.is_empty() {
            String::new()
        } else {
            format!(": {}", failed.join(", "))
        }
    );
}

/// The whole run as one JSON document.
pub fn json_report(machine: &str, rows: &[Row]) -> Value {
    json!({
        "machine": machine,
        "rows": rows.iter().map(Row::json).collect::<Vec<_>>(),
    })
}

/// Three significant digits, no exponent for everyday magnitudes.
pub fn fmt_num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}
