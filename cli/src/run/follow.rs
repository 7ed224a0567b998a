//! Following an export run while it goes: a line per step it logs in its
//! `progress.json`, a bar per stack, and the approval it waits on
//! (docs/export.md, "Waiting (export-poll)", docs/export.md, "Approval (export-approval)"). Destroy runs are followed by
//! [`super::watch`].

use std::future::Future;

use cdkd_aws::StateStore;
use cdkd_core::export::execute::ExportRun;
use cdkd_core::run::RunId;
use cdkd_core::view::export_report::{export_bar_rows, progress_lines};
use cdkd_core::view::progress::changed_bar_lines;
use cdkd_functions::Deps;

/// Runs `work` while printing on stderr a line per step the run `run_id` logs in its
/// `progress.json` (read with a backoff, `cdkd_core::runs::follow_delay_ms`, and once
/// more at the end). With `approval` (a run started with `requireApproval`), also a line
/// when it waits for approval and one when it is decided, read from its `approval.json`
/// until then.
pub async fn follow_steps<T>(
    store: &StateStore,
    run_id: &RunId,
    approval: bool,
    work: impl Future<Output = T>,
) -> T {
    follow(store, run_id, approval, None, work).await
}

/// [`follow_steps`] of a run whose steps run in this process with `deps`: its progress
/// is what they last wrote, read from memory (`cdkd_functions::runs::remembered`), never
/// from S3.
pub async fn follow_local_steps<T>(
    deps: &Deps,
    store: &StateStore,
    run_id: &RunId,
    approval: bool,
    work: impl Future<Output = T>,
) -> T {
    follow(store, run_id, approval, Some(deps), work).await
}

async fn follow<T>(
    store: &StateStore,
    run_id: &RunId,
    approval: bool,
    local: Option<&Deps>,
    work: impl Future<Output = T>,
) -> T {
    let key = cdkd_functions::runs::progress_key(&store.prefix, run_id);
    let shown = std::cell::Cell::new(0usize);
    let opts = crate::run::watch::WatchOptions::for_stderr(true);
    let drawer = std::cell::RefCell::new(
        opts.bars
            .then(|| crate::run::watch::Drawer::new(opts.bar_width)),
    );
    let bars_shown = std::cell::RefCell::new(Vec::new());
    // 0: nothing said yet, 1: said it waits, 2: said the decision (or not asked).
    let approval_said = std::cell::Cell::new(if approval { 0u8 } else { 2 });
    let print_new = || async {
        if approval_said.get() < 2 {
            if let Ok(Some((a, _))) = crate::approval::read(store, run_id).await {
                let said = if a.decision.is_some() { 2 } else { 1 };
                if said > approval_said.get() {
                    let status = cdkd_core::view::approval::render_status(&a);
                    if let Some(first) = status.lines().next() {
                        crate::run::watch::status_line(first);
                    }
                    approval_said.set(said);
                }
            }
        }
        let run = match local {
            Some(deps) => cdkd_functions::runs::remembered::<ExportRun>(deps, store, &key),
            None => cdkd_functions::runs::read::<ExportRun>(store, &key)
                .await
                .ok()
                .flatten(),
        };
        let before = shown.get();
        if let Some(run) = run {
            let lines = progress_lines(&run, shown.get());
            let rows = export_bar_rows(&run);
            match drawer.borrow_mut().as_mut() {
                // A terminal: a live bar per stack, the step lines above them.
                Some(d) => d.show(&lines, &rows),
                None => {
                    for line in &lines {
                        crate::run::watch::status_line(line);
                    }
                    for line in changed_bar_lines(&bars_shown.borrow(), &rows, opts.bar_width) {
                        crate::run::watch::status_line(&line);
                    }
                }
            }
            *bars_shown.borrow_mut() = rows;
            shown.set(run.log.len());
        }
        // Whether this read found something new (the backoff starts again).
        shown.get() != before
    };
    let ended = tokio::sync::Notify::new();
    let work = async {
        let out = work.await;
        ended.notify_one();
        out
    };
    let poller = async {
        let mut unchanged = 0u32;
        loop {
            let pause =
                std::time::Duration::from_millis(cdkd_core::runs::follow_delay_ms(unchanged));
            tokio::select! {
                _ = ended.notified() => break,
                _ = tokio::time::sleep(pause) => {
                    unchanged = if print_new().await { 0 } else { unchanged.saturating_add(1) };
                }
            }
        }
    };
    let (out, ()) = tokio::join!(work, poller);
    print_new().await;
    if let Some(d) = drawer.borrow_mut().as_mut() {
        d.finish();
    }
    out
}
