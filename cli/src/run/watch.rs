//! Watching destroy runs while they go, the same way for a local run (the engine in
//! this process), a remote one (a Step Functions execution) and the destroy runs of a
//! cleanup: poll each run record `<prefix>/_runs/<run-id>/progress.json` until the
//! watched work's own future resolves, draw a bar per stack on a terminal (plain lines
//! otherwise), print a line per resource as it settles, then (one destroy run) read
//! `report.json` and print it.
//!
//! The text comes from `cdkd_core::view::progress` and `cdkd_core::view::report` (pure,
//! snapshot-tested); this module only polls and draws.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::IsTerminal;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use cdkd_aws::StateStore;
use cdkd_core::view::progress::{
    bar_rows, log_lines, settled_log_lines, BarRow, ProgressRow, RunProgress, StackProgress,
};
use cdkd_functions::destroy::finish::RunReport;
use cdkd_functions::destroy::{DestroyRun, StackRun};
use cdkd_functions::runs;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How to watch.
#[derive(Debug, Clone)]
pub struct WatchOptions {
    /// Draw live bars with indicatif (stderr is a terminal); else print plain lines.
    pub bars: bool,
    /// How often `progress.json` is read.
    pub poll: Duration,
    /// Cells of a bar (live and plain).
    pub bar_width: usize,
    /// Print the report as text on stdout at the end (off for `--json`: the caller
    /// prints the report JSON).
    pub print_report: bool,
}

impl WatchOptions {
    /// Bars when stderr is a terminal of a known size (at least 40 columns), a poll
    /// every 0.5 s, the text report unless `json`.
    pub fn for_stderr(json: bool) -> Self {
        let sized = console::Term::stderr()
            .size_checked()
            .is_some_and(|(_, cols)| cols >= 40);
        WatchOptions {
            bars: std::io::stderr().is_terminal() && sized,
            poll: Duration::from_millis(500),
            bar_width: 30,
            print_report: !json,
        }
    }
}

/// What the watched run returned, and its report when it wrote one.
#[derive(Debug)]
pub struct Watched<T> {
    pub output: T,
    pub report: Option<RunReport>,
}

/// The view model of one stack of a run record.
pub fn stack_progress(s: &StackRun) -> StackProgress {
    StackProgress {
        stack: s.stack.clone(),
        region: s.region.clone(),
        rows: s
            .planned
            .iter()
            .map(|p| ProgressRow {
                logical_id: p.logical_id.clone(),
                resource_type: p.resource_type.clone(),
                physical_id: p.physical_id.clone(),
                outcome: s.outcomes.get(&p.logical_id).cloned(),
                in_flight: s.in_flight.contains_key(&p.logical_id),
            })
            .collect(),
        finished: s.finished,
    }
}

/// The view model of a run record (`progress.json`).
pub fn run_progress(r: &DestroyRun) -> RunProgress {
    RunProgress {
        run_id: r.run_id.clone(),
        stacks: r.stacks.iter().map(stack_progress).collect(),
        waves: r.waves,
        stop_requested: r.stop_requested,
    }
}

/// Reads `progress.json` of a run; `None` when it is not there yet (or unreadable: the
/// watcher just tries again at the next poll).
pub async fn read_progress(store: &StateStore, prefix: &str, run_id: &str) -> Option<RunProgress> {
    match runs::read::<DestroyRun>(store, &runs::progress_key(prefix, run_id)).await {
        Ok(r) => r.as_ref().map(run_progress),
        Err(e) => {
            tracing::debug!("{e}");
            None
        }
    }
}

/// Reads `report.json` of a run; `None` when the run wrote none (refused before it
/// planned anything).
pub async fn read_report(store: &StateStore, prefix: &str, run_id: &str) -> Option<RunReport> {
    runs::read(store, &runs::report_key(prefix, run_id))
        .await
        .ok()
        .flatten()
}

/// The report as text (what `print_report` prints).
pub fn report_text(r: &RunReport) -> String {
    cdkd_core::view::report::render_destroy_report(&r.stacks, r.complete, r.aborted.as_deref())
}

/// The runs a watch shows: the one destroy run, or the destroy runs a cleanup has
/// started so far (the cleanup's watcher adds each as the execution history names it).
#[derive(Debug, Clone, Default)]
pub struct RunIds(Arc<Mutex<Vec<String>>>);

impl RunIds {
    pub fn one(run_id: &str) -> Self {
        let ids = RunIds::default();
        ids.add(run_id);
        ids
    }

    /// Adds a run (once).
    pub fn add(&self, run_id: &str) {
        let mut v = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if !v.iter().any(|x| x == run_id) {
            v.push(run_id.to_string());
        }
    }

    pub fn list(&self) -> Vec<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Several runs' progress as one: their stacks in the order the runs were found, a stop
/// requested when any run has one, the most waves of any. `None` when none reads yet.
pub fn merge_progress(runs: Vec<RunProgress>) -> Option<RunProgress> {
    let mut it = runs.into_iter();
    let mut out = it.next()?;
    for r in it {
        out.stacks.extend(r.stacks);
        out.waves = out.waves.max(r.waves);
        out.stop_requested |= r.stop_requested;
    }
    Some(out)
}

/// Reads every run's `progress.json`; a run whose read fails this time keeps its last
/// good snapshot in `seen` (dropping it would print its settled lines again later).
async fn read_all(
    store: &StateStore,
    prefix: &str,
    ids: &RunIds,
    seen: &mut BTreeMap<String, RunProgress>,
) -> Option<RunProgress> {
    let mut got = Vec::new();
    for id in ids.list() {
        if let Some(p) = read_progress(store, prefix, &id).await {
            seen.insert(id.clone(), p);
        }
        if let Some(p) = seen.get(&id) {
            got.push(p.clone());
        }
    }
    merge_progress(got)
}

/// Polls the `progress.json` of every run in `ids` every `opts.poll` until `done`
/// resolves, showing bars and settled lines on stderr; reads once more at the end (so
/// the last settled lines are not lost) and returns `done`'s output. `done` is whatever
/// says the watched work has ended: the local engine's task, or a loop over the
/// execution's status.
pub async fn show_progress<T>(
    store: &StateStore,
    prefix: &str,
    ids: &RunIds,
    done: impl Future<Output = T>,
    opts: &WatchOptions,
) -> T {
    let mut ui = Ui::new(opts);
    let mut prev: Option<RunProgress> = None;
    let mut seen = BTreeMap::new();
    let ended = tokio::sync::Notify::new();
    // Two futures polled side by side, not a select loop: a slow read of progress.json
    // (the SDK retrying through a lost network) must not starve `done`, which follows
    // the execution and says when the connection is lost and back.
    let work = async {
        let out = done.await;
        ended.notify_one();
        out
    };
    // The first read at once, then `opts.poll` after a read that found something new,
    // doubling while nothing changes (`cdkd_core::runs::follow_delay_from_ms`).
    let poller = async {
        let first_ms = u64::try_from(opts.poll.as_millis()).unwrap_or(u64::MAX);
        let mut pause = Duration::ZERO;
        let mut unchanged = 0u32;
        loop {
            tokio::select! {
                _ = ended.notified() => break,
                _ = tokio::time::sleep(pause) => {}
            }
            tokio::select! {
                _ = ended.notified() => break,
                next = read_all(store, prefix, ids, &mut seen) => {
                    match next {
                        Some(next) if prev.as_ref() != Some(&next) => {
                            ui.show(prev.as_ref(), &next);
                            prev = Some(next);
                            unchanged = 0;
                        }
                        _ => unchanged = unchanged.saturating_add(1),
                    }
                }
            }
            pause =
                Duration::from_millis(cdkd_core::runs::follow_delay_from_ms(first_ms, unchanged));
        }
    };
    let (output, ()) = tokio::join!(work, poller);
    if let Some(next) = read_all(store, prefix, ids, &mut seen).await {
        ui.show(prev.as_ref(), &next);
    }
    ui.finish();
    output
}

/// [`show_progress`] of one destroy run, then its `report.json`: printed on stdout
/// unless told not to, and returned with `done`'s output.
pub async fn watch_progress<T>(
    store: &StateStore,
    prefix: &str,
    run_id: &str,
    done: impl Future<Output = T>,
    opts: &WatchOptions,
) -> Watched<T> {
    let output = show_progress(store, prefix, &RunIds::one(run_id), done, opts).await;
    let report = read_report(store, prefix, run_id).await;
    if opts.print_report {
        if let Some(r) = &report {
            crate::out::print(&report_text(r));
        }
    }
    Watched { output, report }
}

/// The bars being drawn, if any: lines printed meanwhile (an execution's status, a
/// failed step, a lost connection) must go above them, or the next redraw erases them.
static DRAWING: Mutex<Option<MultiProgress>> = Mutex::new(None);

/// Prints a line on stderr, above the bars while a watch draws them.
pub fn status_line(line: &str) {
    let drawing = DRAWING.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match drawing {
        Some(multi) => {
            let _ = multi.println(line);
        }
        None => eprintln!("{line}"),
    }
}

/// Live bars (indicatif) or plain lines.
enum Ui {
    Bars(Drawer),
    Plain { width: usize },
}

impl Ui {
    fn new(opts: &WatchOptions) -> Self {
        if opts.bars {
            Ui::Bars(Drawer::new(opts.bar_width))
        } else {
            Ui::Plain {
                width: opts.bar_width,
            }
        }
    }

    fn show(&mut self, prev: Option<&RunProgress>, next: &RunProgress) {
        match self {
            Ui::Plain { width } => {
                for line in log_lines(prev, next, *width) {
                    eprintln!("{line}");
                }
            }
            Ui::Bars(d) => d.show(&settled_log_lines(prev, next), &bar_rows(next)),
        }
    }

    fn finish(&mut self) {
        if let Ui::Bars(d) = self {
            d.finish();
        }
    }
}

/// Bars drawn live on stderr (one per row label), lines printed above them. Destroy's
/// and export's watchers draw through it.
pub struct Drawer {
    multi: MultiProgress,
    bars: BTreeMap<String, ProgressBar>,
    width: usize,
}

impl Drawer {
    pub fn new(width: usize) -> Self {
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        *DRAWING.lock().unwrap_or_else(|p| p.into_inner()) = Some(multi.clone());
        Drawer {
            multi,
            bars: BTreeMap::new(),
            width,
        }
    }

    pub fn show(&mut self, lines: &[String], rows: &[BarRow]) {
        for line in lines {
            let _ = self.multi.println(line);
        }
        for r in rows {
            let width = self.width;
            let multi = &self.multi;
            let bar = self.bars.entry(r.label.clone()).or_insert_with(|| {
                let template = format!("{{prefix}} [{{bar:{width}}}] {{pos}}/{{len}} {{msg}}");
                let style = ProgressStyle::with_template(&template)
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("#>-");
                let pb = multi.add(ProgressBar::new(u64::from(r.total)));
                pb.set_style(style);
                pb.set_prefix(r.label.clone());
                pb
            });
            bar.set_length(u64::from(r.total));
            bar.set_position(u64::from(r.settled));
            bar.set_message(r.status.clone());
        }
    }

    pub fn finish(&mut self) {
        for b in self.bars.values() {
            b.finish();
        }
        DRAWING.lock().unwrap_or_else(|p| p.into_inner()).take();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cdkd_core::destroy::model::{RowOutcome, RunResult};

    #[test]
    fn progress_json_converts_to_the_progress_view_rows_in_plan_order() {
        // progress.json as the wave step writes it.
        let rec: DestroyRun = serde_json::from_value(serde_json::json!({
            "runId": "r1", "startedMs": 1, "skipFinalSnapshot": false, "waves": 2,
            "stacks": [{
                "stack": "Shop", "region": "us-east-1",
                "planned": [
                    {"logicalId": "A", "resourceType": "AWS::SQS::Queue", "physicalId": "a"},
                    {"logicalId": "B", "resourceType": "AWS::SNS::Topic"},
                    {"logicalId": "C", "resourceType": "AWS::Foo::Bar"}
                ],
                "outcomes": {"B": {"outcome": "deleted"}},
                "inFlight": {"C": {"handle": {"kind": "cloudControl", "requestToken": "rt",
                    "clientToken": "ct", "startedMs": 5, "polls": 2}, "expectedDoneMs": 9, "attempt": 0}},
                "finished": null
            }]
        }))
        .unwrap();
        let v = run_progress(&rec);
        assert_eq!(v.run_id, "r1");
        let s = &v.stacks[0];
        assert_eq!(
            s.rows
                .iter()
                .map(|r| r.logical_id.as_str())
                .collect::<Vec<_>>(),
            ["A", "B", "C"]
        );
        assert_eq!(s.rows[1].outcome, Some(RowOutcome::Deleted));
        assert_eq!((s.settled(), s.in_flight(), s.total()), (1, 1, 3));
        let mut rec = rec;
        rec.stacks[0].finished = Some(RunResult::Partial);
        assert_eq!(
            stack_progress(&rec.stacks[0]).finished,
            Some(RunResult::Partial)
        );
    }

    fn one_stack(run: &str, stack: &str, waves: u32, stop: bool) -> RunProgress {
        RunProgress {
            run_id: run.into(),
            stacks: vec![StackProgress {
                stack: stack.into(),
                region: "us-east-1".into(),
                rows: vec![],
                finished: None,
            }],
            waves,
            stop_requested: stop,
        }
    }

    #[test]
    fn cleanup_watch_merges_its_destroy_runs_stacks_in_the_order_found() {
        assert_eq!(merge_progress(vec![]), None);
        let m = merge_progress(vec![
            one_stack("cleanup-1", "PreviewA", 2, false),
            one_stack("d2", "PreviewB", 5, true),
        ])
        .unwrap();
        assert_eq!(
            m.stacks
                .iter()
                .map(|s| s.stack.as_str())
                .collect::<Vec<_>>(),
            ["PreviewA", "PreviewB"]
        );
        assert_eq!((m.waves, m.stop_requested), (5, true));
    }

    #[test]
    fn run_ids_keep_each_run_once_in_the_order_added() {
        let ids = RunIds::one("a");
        let shared = ids.clone();
        shared.add("b");
        shared.add("a");
        assert_eq!(ids.list(), ["a", "b"]);
    }
}
