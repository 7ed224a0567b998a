//! Live progress of a destroy run, for people: a view model built from the run record
//! (`_runs/<run-id>/progress.json`), a fixed-width bar line per stack, and the "settled"
//! lines between two snapshots (one per resource newly deleted / already gone / retained
//! / skipped / failed / blocked).
//!
//! Pure. The CLI converts the workflow's run record into [`RunProgress`]; it draws live
//! bars itself on a terminal and prints what these functions return everywhere else (a
//! log, a pipe, a snapshot test). The local and the remote watcher share it. Untrusted
//! text (stack names, ids, types, AWS error messages) is stripped or flattened onto one
//! line, so nothing from a record or from AWS can move the cursor or start a new line.

use crate::destroy::model::{ReportCounts, RowOutcome, RunResult};
use crate::run::RunId;
use crate::runs::LocalPhase;
use crate::text::{or_unrenderable, strip};
use crate::view::report::{outcome_counts, outcome_phrase};
use crate::view::words::stack_region;

/// One record of a stack of the run, in plan order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgressRow {
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    /// `None` while the record is not settled.
    pub outcome: Option<RowOutcome>,
    /// A delete of it was started and is not settled yet.
    pub in_flight: bool,
}

/// One stack of the run (children come before their parent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StackProgress {
    pub stack: String,
    pub region: String,
    pub rows: Vec<ProgressRow>,
    /// Set once the stack is settled.
    pub finished: Option<RunResult>,
}

/// Where a stack stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackPhase {
    /// Nothing settled or started yet (an earlier stack of the run goes first).
    Waiting,
    /// Deletes are being started, polled and settled.
    Deleting,
    /// A stop was requested: nothing new starts; what is in flight settles.
    Stopping,
    /// Settled.
    Finished(RunResult),
}

impl StackPhase {
    pub fn word(self) -> &'static str {
        match self {
            StackPhase::Waiting => "waiting",
            StackPhase::Deleting => "deleting",
            StackPhase::Stopping => "stopping",
            StackPhase::Finished(RunResult::Clean) => "destroyed",
            StackPhase::Finished(RunResult::Partial) => "partly destroyed",
            StackPhase::Finished(RunResult::Interrupted) => "interrupted",
        }
    }
}

impl StackProgress {
    /// Records planned.
    pub fn total(&self) -> u32 {
        self.rows.len() as u32
    }

    /// Records with an outcome.
    pub fn settled(&self) -> u32 {
        self.rows.iter().filter(|r| r.outcome.is_some()).count() as u32
    }

    /// Deletes started and not settled.
    pub fn in_flight(&self) -> u32 {
        self.rows
            .iter()
            .filter(|r| r.in_flight && r.outcome.is_none())
            .count() as u32
    }

    /// Settled records by outcome (`interrupted` counts only rows marked so).
    pub fn counts(&self) -> ReportCounts {
        let mut c = ReportCounts::default();
        for o in self.rows.iter().filter_map(|r| r.outcome.as_ref()) {
            match o {
                RowOutcome::Deleted => c.deleted += 1,
                RowOutcome::AlreadyGone => c.already_gone += 1,
                RowOutcome::Retained => c.retained += 1,
                RowOutcome::Skipped { .. } => c.skipped += 1,
                RowOutcome::Failed { .. } => c.failed += 1,
                RowOutcome::Blocked { .. } => c.blocked += 1,
                RowOutcome::Interrupted => c.interrupted += 1,
            }
        }
        c
    }

    /// The same stack of another snapshot: same name and region.
    pub fn same_stack(&self, other: &StackProgress) -> bool {
        self.stack == other.stack && self.region == other.region
    }

    pub fn phase(&self, stop_requested: bool) -> StackPhase {
        if let Some(r) = self.finished {
            return StackPhase::Finished(r);
        }
        if stop_requested {
            return StackPhase::Stopping;
        }
        if self.rows.iter().any(|r| r.outcome.is_some() || r.in_flight) {
            StackPhase::Deleting
        } else {
            StackPhase::Waiting
        }
    }
}

/// What `progress.json` says about a run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunProgress {
    pub run_id: RunId,
    /// Children first, the root stack last.
    pub stacks: Vec<StackProgress>,
    /// Wave invocations so far.
    pub waves: u32,
    pub stop_requested: bool,
}

/// `Shop (us-east-1)`.
pub fn stack_label(s: &StackProgress) -> String {
    stack_region(&s.stack, &s.region)
}

/// `deleting: 3 deleted, 1 failed; 2 in flight` — what follows the bar.
pub fn stack_status(s: &StackProgress, stop_requested: bool) -> String {
    let mut out = s.phase(stop_requested).word().to_string();
    if let Some(counts) = outcome_counts(&s.counts()) {
        out.push_str(": ");
        out.push_str(&counts);
    }
    let flying = s.in_flight();
    if flying > 0 {
        out.push_str(&format!("; {flying} in flight"));
    }
    out
}

/// Where a destroy run stands, for `runs list --local`: `wave 3: 5/8 resources settled`
/// (summed over its stacks), `; stop requested` when one was.
pub fn destroy_phase(p: &RunProgress) -> String {
    let (settled, total) = p.settled_of_total();
    destroy_wave_text(p.waves, settled, total, p.stop_requested)
}

/// [`destroy_phase`] of a destroy at wave `waves` with `settled` of `total` records
/// settled.
pub fn destroy_wave_text(waves: u32, settled: u32, total: u32, stop_requested: bool) -> String {
    let mut out = format!("wave {waves}: {settled}/{total} resources settled");
    if stop_requested {
        out.push_str("; stop requested");
    }
    out
}

impl RunProgress {
    /// Its records settled, of all its records.
    pub fn settled_of_total(&self) -> (u32, u32) {
        let settled = self.stacks.iter().map(StackProgress::settled).sum();
        (settled, self.stacks.iter().map(StackProgress::total).sum())
    }

    /// Where the destroy stands, as a local run's phase.
    pub fn local_phase(&self) -> LocalPhase {
        let (settled, total) = self.settled_of_total();
        LocalPhase::Destroy {
            waves: self.waves,
            settled,
            total,
            stop_requested: self.stop_requested,
        }
    }
}

/// `[########------------]`: `width` cells filled in proportion to settled records (an
/// empty stack is full).
pub fn bar(settled: u32, total: u32, width: usize) -> String {
    let filled = if total == 0 {
        width
    } else {
        (settled.min(total) as usize * width) / total as usize
    };
    format!("[{}{}]", "#".repeat(filled), "-".repeat(width - filled))
}

/// One stack's bar line: label, bar, `settled/total`, status.
pub fn render_bar_line(s: &StackProgress, stop_requested: bool, bar_width: usize) -> String {
    format!(
        "{} {} {}/{} {}",
        stack_label(s),
        bar(s.settled(), s.total(), bar_width),
        s.settled(),
        s.total(),
        stack_status(s, stop_requested)
    )
}

/// One bar of a live view: a stack of a destroy (records settled) or of an export
/// (phases done). The CLI draws these live; [`render_bar_rows`] prints them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BarRow {
    pub label: String,
    pub settled: u32,
    pub total: u32,
    /// What follows the counts.
    pub status: String,
}

/// A destroy run's bars: one per stack.
pub fn bar_rows(p: &RunProgress) -> Vec<BarRow> {
    p.stacks
        .iter()
        .map(|s| BarRow {
            label: stack_label(s),
            settled: s.settled(),
            total: s.total(),
            status: stack_status(s, p.stop_requested),
        })
        .collect()
}

/// Bar lines, labels padded to one width, one line each.
pub fn render_bar_rows(rows: &[BarRow], bar_width: usize) -> String {
    let w = rows
        .iter()
        .map(|r| r.label.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for r in rows {
        out.push_str(&format!(
            "{}{} {} {}/{} {}\n",
            r.label,
            " ".repeat(w - r.label.chars().count()),
            bar(r.settled, r.total, bar_width),
            r.settled,
            r.total,
            r.status
        ));
    }
    out
}

/// The bar lines of the rows that changed since `prev` (every row the first time): what
/// a watcher without a terminal prints after its other lines.
pub fn changed_bar_lines(prev: &[BarRow], rows: &[BarRow], bar_width: usize) -> Vec<String> {
    let changed: Vec<BarRow> = rows.iter().filter(|r| !prev.contains(r)).cloned().collect();
    render_bar_rows(&changed, bar_width)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every stack's bar line, labels padded to one width, one line each.
pub fn render_bars(p: &RunProgress, bar_width: usize) -> String {
    render_bar_rows(&bar_rows(p), bar_width)
}

/// A record that settled between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettledRow {
    pub stack: String,
    /// Shown only when the run has this stack name in several regions (a cleanup).
    pub region: Option<String>,
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    pub outcome: RowOutcome,
}

/// Rows whose outcome is new in `next` (absent or different in `prev`), in the order of
/// `next` (stacks children first, rows in plan order), each stack's newly blocked rows
/// after its other rows (a row is never reported blocked before what blocks it).
/// `prev: None` = everything settled.
pub fn newly_settled(prev: Option<&RunProgress>, next: &RunProgress) -> Vec<SettledRow> {
    // A stack is its name and region: a cleanup can destroy one name in two regions.
    let before = |stack: &StackProgress, id: &str| -> Option<&RowOutcome> {
        prev?
            .stacks
            .iter()
            .find(|s| s.same_stack(stack))?
            .rows
            .iter()
            .find(|r| r.logical_id == id)?
            .outcome
            .as_ref()
    };
    let mut out = Vec::new();
    for s in &next.stacks {
        let blocked_last = s
            .rows
            .iter()
            .filter(|r| !matches!(r.outcome, Some(RowOutcome::Blocked { .. })))
            .chain(
                s.rows
                    .iter()
                    .filter(|r| matches!(r.outcome, Some(RowOutcome::Blocked { .. }))),
            );
        for r in blocked_last {
            let Some(o) = &r.outcome else { continue };
            if before(s, &r.logical_id) == Some(o) {
                continue;
            }
            out.push(SettledRow {
                stack: s.stack.clone(),
                region: several_regions(next, &s.stack).then(|| s.region.clone()),
                logical_id: r.logical_id.clone(),
                resource_type: r.resource_type.clone(),
                physical_id: r.physical_id.clone(),
                outcome: o.clone(),
            });
        }
    }
    out
}

/// True when `next` has the stack name `stack` in more than one region.
fn several_regions(next: &RunProgress, stack: &str) -> bool {
    let mut regions = next
        .stacks
        .iter()
        .filter(|s| s.stack == stack)
        .map(|s| s.region.as_str());
    let first = regions.next();
    regions.any(|r| Some(r) != first)
}

/// `Shop: Topic (AWS::SNS::Topic) deleted`; `Shop (eu-west-1): ...` when the run has
/// `Shop` in several regions.
pub fn render_settled(r: &SettledRow) -> String {
    let stack = match &r.region {
        Some(region) => stack_region(&r.stack, region),
        None => or_unrenderable(strip(&r.stack)),
    };
    format!(
        "{}: {} ({}) {}",
        stack,
        or_unrenderable(strip(&r.logical_id)),
        or_unrenderable(strip(&r.resource_type)),
        outcome_phrase(&r.outcome)
    )
}

/// [`newly_settled`] rendered, one line each (no newline).
pub fn settled_lines(prev: Option<&RunProgress>, next: &RunProgress) -> Vec<String> {
    newly_settled(prev, next)
        .iter()
        .map(render_settled)
        .collect()
}

/// [`settled_lines`] as a watch prints them: indented under the stack lines.
pub fn settled_log_lines(prev: Option<&RunProgress>, next: &RunProgress) -> Vec<String> {
    settled_lines(prev, next)
        .into_iter()
        .map(|l| format!("  {l}"))
        .collect()
}

/// What a watch without live bars (a log, a pipe) prints for a new snapshot: the newly
/// settled resources, then the stacks whose phase changed (so a stack's `destroyed`
/// comes after its resources).
pub fn log_lines(prev: Option<&RunProgress>, next: &RunProgress, bar_width: usize) -> Vec<String> {
    let mut out = settled_log_lines(prev, next);
    out.extend(phase_changes(prev, next, bar_width));
    out
}

/// Stacks whose phase changed between two snapshots, rendered as bar lines (what a log
/// gets instead of a redrawn bar: one line when a stack starts and one when it ends).
pub fn phase_changes(
    prev: Option<&RunProgress>,
    next: &RunProgress,
    bar_width: usize,
) -> Vec<String> {
    next.stacks
        .iter()
        .filter(|s| {
            let was = prev
                .and_then(|p| p.stacks.iter().find(|x| x.same_stack(s)))
                .map(|x| x.phase(prev.is_some_and(|p| p.stop_requested)));
            let now = s.phase(next.stop_requested);
            now != StackPhase::Waiting && was != Some(now)
        })
        .map(|s| render_bar_line(s, next.stop_requested, bar_width))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, ty: &str, outcome: Option<RowOutcome>, in_flight: bool) -> ProgressRow {
        ProgressRow {
            logical_id: id.into(),
            resource_type: ty.into(),
            physical_id: Some(format!("{id}-phys")),
            outcome,
            in_flight,
        }
    }

    fn early() -> RunProgress {
        RunProgress {
            run_id: "destroy-Shop-1".into(),
            stacks: vec![
                StackProgress {
                    stack: "Shop~Network".into(),
                    region: "us-east-1".into(),
                    rows: vec![
                        row("ChildQueue", "AWS::SQS::Queue", None, true),
                        row("ChildParam", "AWS::SSM::Parameter", None, false),
                    ],
                    finished: None,
                },
                StackProgress {
                    stack: "Shop".into(),
                    region: "us-east-1".into(),
                    rows: vec![
                        row("Topic", "AWS::SNS::Topic", None, false),
                        row("Network", "AWS::CloudFormation::Stack", None, false),
                    ],
                    finished: None,
                },
            ],
            waves: 1,
            stop_requested: false,
        }
    }

    fn later() -> RunProgress {
        let mut p = early();
        p.waves = 3;
        p.stacks[0].rows[0].outcome = Some(RowOutcome::Deleted);
        p.stacks[0].rows[1].outcome = Some(RowOutcome::AlreadyGone);
        p.stacks[0].finished = Some(RunResult::Clean);
        p.stacks[1].rows[0].outcome = Some(RowOutcome::Failed {
            error: "AuthorizationError:\nnot allowed\u{1b}[2J".into(),
        });
        p.stacks[1].rows[1].in_flight = true;
        p
    }

    #[test]
    fn progress_bar_lines_one_per_stack_with_counts_and_phase() {
        insta::assert_snapshot!(format!(
            "{}---\n{}",
            render_bars(&early(), 20),
            render_bars(&later(), 20)
        ));
    }

    #[test]
    fn progress_bar_fills_in_proportion_and_empty_stack_is_full() {
        assert_eq!(bar(0, 4, 8), "[--------]");
        assert_eq!(bar(1, 4, 8), "[##------]");
        assert_eq!(bar(4, 4, 8), "[########]");
        assert_eq!(bar(9, 4, 8), "[########]", "never overflows");
        assert_eq!(bar(0, 0, 4), "[####]");
    }

    #[test]
    fn progress_counts_in_flight_and_phase_from_rows() {
        let p = later();
        let s = &p.stacks[1];
        assert_eq!((s.total(), s.settled(), s.in_flight()), (2, 1, 1));
        assert_eq!(s.counts().failed, 1);
        assert_eq!(s.phase(false), StackPhase::Deleting);
        assert_eq!(s.phase(true), StackPhase::Stopping);
        assert_eq!(
            p.stacks[0].phase(true),
            StackPhase::Finished(RunResult::Clean)
        );
        assert_eq!(early().stacks[1].phase(false), StackPhase::Waiting);
    }

    #[test]
    fn settled_lines_one_per_newly_settled_resource_only() {
        let lines = settled_lines(Some(&early()), &later());
        assert_eq!(lines.len(), 3, "{lines:?}");
        assert!(
            settled_lines(Some(&later()), &later()).is_empty(),
            "nothing new, no line"
        );
        insta::assert_snapshot!(lines.join("\n"));
    }

    #[test]
    fn settled_lines_and_phases_tell_one_stack_name_in_two_regions_apart() {
        // A cleanup destroys `Shop` in two regions: each settles and finishes on its own.
        let one = |region: &str, done: bool| StackProgress {
            stack: "Shop".into(),
            region: region.into(),
            rows: vec![row(
                "Queue",
                "AWS::SQS::Queue",
                done.then_some(RowOutcome::Deleted),
                false,
            )],
            finished: done.then_some(RunResult::Clean),
        };
        let run = |stacks| RunProgress {
            run_id: "cleanup-1".into(),
            stacks,
            waves: 1,
            stop_requested: false,
        };
        let first = run(vec![one("us-east-1", true), one("eu-west-1", false)]);
        let second = run(vec![one("us-east-1", true), one("eu-west-1", true)]);
        let lines = settled_lines(Some(&first), &second);
        assert_eq!(
            lines,
            ["Shop (eu-west-1): Queue (AWS::SQS::Queue) deleted"],
            "{lines:?}"
        );
        let phases = phase_changes(Some(&first), &second, 4);
        assert_eq!(phases.len(), 1, "{phases:?}");
        assert!(phases[0].starts_with("Shop (eu-west-1)"), "{phases:?}");
    }

    #[test]
    fn settled_lines_cover_every_outcome_and_flatten_untrusted_text() {
        let mut p = early();
        p.stacks[1].rows = vec![
            row(
                "Gone",
                "AWS::SQS::Queue",
                Some(RowOutcome::AlreadyGone),
                false,
            ),
            row("Keep", "AWS::S3::Bucket", Some(RowOutcome::Retained), false),
            row(
                "Hook",
                "Custom::Thing",
                Some(RowOutcome::Skipped {
                    reason: "handler\r\nFAILED".into(),
                }),
                false,
            ),
            row(
                "Role\u{1b}]0;x\u{7}",
                "AWS::IAM::Role",
                Some(RowOutcome::Blocked {
                    by: "Policy\u{202e}".into(),
                }),
                false,
            ),
            row(
                "Late",
                "AWS::SNS::Topic",
                Some(RowOutcome::Interrupted),
                false,
            ),
        ];
        let lines = settled_lines(None, &p);
        let text = lines.join("\n");
        assert!(!text.contains('\u{1b}') && !text.contains('\u{202e}') && !text.contains('\r'));
        assert_eq!(lines.len(), 5);
        insta::assert_snapshot!(text);
    }

    #[test]
    fn settled_lines_name_a_blocked_row_after_what_blocks_it() {
        let mut p = early();
        p.stacks[1].rows = vec![
            row(
                "Topic",
                "AWS::SNS::Topic",
                Some(RowOutcome::Blocked { by: "Data".into() }),
                false,
            ),
            row(
                "Data",
                "AWS::S3::Bucket",
                Some(RowOutcome::Failed {
                    error: "not empty".into(),
                }),
                false,
            ),
        ];
        assert_eq!(
            settled_lines(None, &p),
            vec![
                "Shop: Data (AWS::S3::Bucket) failed: not empty",
                "Shop: Topic (AWS::SNS::Topic) blocked by Data"
            ]
        );
    }

    #[test]
    fn settled_line_repeats_when_an_outcome_changes() {
        // A retried record: failed in one snapshot, deleted in the next.
        let mut a = early();
        a.stacks[1].rows[0].outcome = Some(RowOutcome::Failed { error: "x".into() });
        let mut b = a.clone();
        b.stacks[1].rows[0].outcome = Some(RowOutcome::Deleted);
        assert_eq!(
            settled_lines(Some(&a), &b),
            vec!["Shop: Topic (AWS::SNS::Topic) deleted"]
        );
    }

    #[test]
    fn phase_change_lines_for_a_log_when_a_stack_starts_and_ends() {
        let lines = phase_changes(Some(&early()), &later(), 10);
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with("Shop~Network (us-east-1) [##########] 2/2 destroyed"));
        assert!(phase_changes(Some(&later()), &later(), 10).is_empty());
        let first = phase_changes(None, &early(), 10);
        assert_eq!(first.len(), 1, "the waiting root gets no line yet");
    }

    #[test]
    fn log_lines_put_a_stacks_resources_before_its_phase_line() {
        let lines = log_lines(Some(&early()), &later(), 10);
        assert_eq!(
            lines,
            [
                "  Shop~Network: ChildQueue (AWS::SQS::Queue) deleted",
                "  Shop~Network: ChildParam (AWS::SSM::Parameter) already gone",
                "  Shop: Topic (AWS::SNS::Topic) failed: AuthorizationError: not allowed [2J",
                "Shop~Network (us-east-1) [##########] 2/2 destroyed: 1 deleted, 1 already gone",
                "Shop (us-east-1) [#####-----] 1/2 deleting: 1 failed; 1 in flight",
            ]
        );
    }

    #[test]
    fn an_interrupted_row_is_named_interrupted_in_settled_lines_and_status() {
        // docs/destroy.md, "Terms": the same word as the report's rows and counts.
        let mut p = early();
        p.stacks[1].rows[0].outcome = Some(RowOutcome::Interrupted);
        assert_eq!(
            settled_lines(None, &p),
            ["Shop: Topic (AWS::SNS::Topic) interrupted"]
        );
        assert_eq!(stack_status(&p.stacks[1], true), "stopping: 1 interrupted");
    }
}
