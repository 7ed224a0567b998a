//! `destroy-wave`: one Lambda call per wave. Renew the locks; for the first unsettled
//! stack poll the deletes in flight, start every record whose dependents are settled,
//! drop confirmed deletes from `state.json`; when a stack is settled delete its record
//! (clean) or keep it (partial) and go on with the next; return how long to wait.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use cdkd_aws::{HeldLock, StateStore};
use cdkd_core::continuation::continues;
use cdkd_core::destroy::decide::{decide_with, DecideOptions, Decision, DeleterCatalog, Route};
use cdkd_core::destroy::graph::DeleteGraph;
use cdkd_core::destroy::model::{RowOutcome, RunResult};
use cdkd_core::destroy::waves::ready_set;
use cdkd_core::keys::child_stack_name;
use cdkd_core::text::flatten_str;
use cdkd_deleters::request::DeleteOptions;
use cdkd_deleters::{
    DeleteError, DeleteErrorKind, DeleteProgress, DeleteRequest, Registry, RunContext,
};
use futures::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::record::{delete_request, remove_resources, resources_of};
use super::{Carry, Flight, Retry, RunRef, StackRun};
use crate::deps::Deps;
use crate::error::StepError;
use crate::runs;

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WaveInput {
    pub run: RunRef,
    pub locks: Vec<HeldLock>,
    /// Waves this execution ran before this one.
    #[serde(default)]
    pub loops: u32,
}

/// Longest `Wait` between two waves: a completion is noticed within a minute even when
/// an estimate was far off.
const MAX_WAIT_SECONDS: u64 = 60;

struct Ctx<'a> {
    deps: &'a Deps,
    store: StateStore,
    locks: cdkd_aws::LockManager,
    registry: Registry,
    run: &'a RunRef,
    skip_final_snapshot: bool,
    remove_protection: bool,
    deadline: Instant,
}

impl Ctx<'_> {
    fn run_context(&self, stack: &str) -> RunContext {
        RunContext {
            run_id: self.run.run_id.as_str().to_owned(),
            stack: stack.to_string(),
            state_bucket: self.run.bucket.clone(),
            state_prefix: self.run.prefix.clone(),
        }
    }
    fn now(&self) -> u64 {
        self.deps.now().max(0) as u64
    }
}

pub async fn run(input: WaveInput, deps: &Deps) -> Result<Carry, StepError> {
    let started = Instant::now();
    let WaveInput { run, locks, loops } = input;
    let loops = loops.saturating_add(1);
    let store = deps.store(&run.bucket, &run.prefix).await;
    let lock_manager = deps.locks(&run.bucket, &run.prefix).await;
    // A lost lock stops the run before it touches anything.
    let mut held = Vec::with_capacity(locks.len());
    for h in &locks {
        held.push(
            crate::held::renew(&lock_manager, h)
                .await
                .map_err(destroy_stopped)?,
        );
    }
    let key = runs::progress_key(&run.prefix, &run.run_id);
    let mut progress = runs::Progress::read(&store, &key).await?.ok_or_else(|| {
        StepError::bad_input(format!(
            "run {} has no progress.json under s3://{}/{}",
            run.run_id, run.bucket, run.prefix
        ))
    })?;
    progress.rec.waves += 1;
    let ctx = Ctx {
        deps,
        store: store.clone(),
        locks: lock_manager,
        registry: deps.registry(&run.region, &run.bucket).await,
        run: &run,
        skip_final_snapshot: progress.rec.skip_final_snapshot,
        remove_protection: progress.rec.remove_protection,
        deadline: started + deps.budgets.wave_soft,
    };

    let mut wait_ms = 0u64;
    while let Some(idx) = progress
        .rec
        .stacks
        .iter()
        .position(|s| s.finished.is_none())
    {
        let children: BTreeMap<String, RunResult> = progress
            .rec
            .stacks
            .iter()
            .filter_map(|s| s.finished.map(|f| (s.stack.clone(), f)))
            .collect();
        let stop = progress.rec.stop_requested;
        let stepped = step_stack(
            &ctx,
            &mut progress.rec.stacks[idx],
            &children,
            stop,
            &mut held,
        )
        .await;
        let finished = match stepped {
            Ok(step) if step.finished => {
                finish_stack(&ctx, &mut progress.rec.stacks[idx], &mut held, stop)
                    .await
                    .map(|()| step)
            }
            other => other,
        };
        let step = match finished {
            Ok(step) => step,
            Err(e) => {
                // What this invocation settled is the run's record even when it stops
                // (a lost lock): the report names it, a retry does not redo it.
                if let Err(save) = progress.save(&store).await {
                    tracing::warn!("progress of run {} not saved: {save}", run.run_id);
                }
                return Err(e);
            }
        };
        if step.finished {
            progress.save(&store).await?;
            continue;
        }
        if step.progressed {
            // Saved as it goes, so a retry after a crash redoes as little as possible.
            progress.save(&store).await?;
        }
        if Instant::now() >= ctx.deadline {
            break;
        }
        if step.progressed {
            continue;
        }
        // Only waiting now: for deletes in flight or retries due later.
        let delta = step
            .earliest_ms
            .map_or(1000, |t| t.saturating_sub(ctx.now()));
        if Duration::from_millis(delta) <= deps.budgets.inline_wait
            && Instant::now() + Duration::from_millis(delta) < ctx.deadline
        {
            tokio::time::sleep(Duration::from_millis(delta)).await;
            continue;
        }
        wait_ms = delta;
        break;
    }
    progress.save(&store).await?;
    let settled = progress.rec.settled();
    Ok(Carry {
        loops,
        continue_as_new: continues(loops, settled, deps.budgets.history_limit),
        remaining: progress.rec.remaining(),
        settled,
        wait_seconds: if settled {
            0
        } else {
            wait_ms.div_ceil(1000).min(MAX_WAIT_SECONDS)
        },
        run,
        locks: held,
    })
}

struct StackStep {
    progressed: bool,
    finished: bool,
    earliest_ms: Option<u64>,
}

/// The fence of a write to `stack`'s record, or of a delete call for it
/// (docs/destroy.md, "The lock"): its lock is read and must still be the one the run acquired.
async fn fence(ctx: &Ctx<'_>, held: &mut [HeldLock], stack: &str) -> Result<(), StepError> {
    let Some(h) = held.iter_mut().find(|h| h.stack == stack) else {
        return Err(destroy_stopped(StepError::new(
            crate::error::names::LOCK_LOST,
            format!("The run holds no lock of stack '{}'", flatten_str(stack)),
        )));
    };
    *h = crate::held::ensure_own(&ctx.locks, h)
        .await
        .map_err(destroy_stopped)?;
    Ok(())
}

/// A lost lock's error, with what the destroy did about it and the way on
/// (`cdkd_core::view::contention::DESTROY_LOCK_LOST`); any other error as it is.
fn destroy_stopped(e: StepError) -> StepError {
    if e.name != crate::error::names::LOCK_LOST {
        return e;
    }
    StepError::new(
        crate::error::names::LOCK_LOST,
        format!(
            "{} {}",
            e.message,
            cdkd_core::view::contention::DESTROY_LOCK_LOST
        ),
    )
}

async fn step_stack(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    children: &BTreeMap<String, RunResult>,
    stop: bool,
    held: &mut [HeldLock],
) -> Result<StackStep, StepError> {
    let Some(loaded) = ctx.store.get_state(&sr.stack, &sr.region).await? else {
        // Gone already: a retried step that deleted it, or removed by hand.
        settle_removed(sr, &Map::new());
        return Ok(StackStep {
            progressed: true,
            finished: true,
            earliest_ms: None,
        });
    };
    let resources = resources_of(&sr.stack, &sr.region, &loaded.record)?;
    // A planned record this run no longer finds in state was removed after a confirmed
    // delete by an earlier invocation that died before it saved its progress.
    settle_removed(sr, &resources);
    let graph = DeleteGraph::build(&resources).map_err(|d| {
        StepError::refused(format!(
            "Stack '{}' ({}): {d}",
            flatten_str(&sr.stack),
            flatten_str(&sr.region)
        ))
    })?;
    let max_parallel = ctx.deps.budgets.max_parallel.max(1);
    let mut gone: Vec<String> = Vec::new();

    // 1. Deletes in flight whose expected completion has come.
    let mut progressed = poll_due(ctx, sr, &resources, max_parallel, &mut gone).await;

    // 2. What is ready now; what is blocked by a failure.
    let flying: BTreeSet<String> = sr.in_flight.keys().cloned().collect();
    let rs = ready_set(&graph, &sr.outcomes, &flying);
    for (id, by) in rs.blocked {
        sr.outcomes.insert(id, RowOutcome::Blocked { by });
        progressed = true;
    }
    gone.extend(rs.remove_from_state);

    // 3. Start the ready records (see `decide_ready`).
    let mut to_start: Vec<DeleteRequest> = Vec::new();
    if Instant::now() < ctx.deadline {
        let (decided, marked) =
            decide_ready(ctx, sr, rs.ready, &resources, children, stop, &mut gone);
        progressed |= decided;
        to_start = marked;
    }
    // Marks made in this pass are saved by the caller before any of their calls; marks
    // saved earlier are sent now, while the stack's lock is still the run's.
    if !to_start.is_empty() {
        fence(ctx, held, &sr.stack).await?;
        send_marked(ctx, sr, to_start, max_parallel, &mut gone).await;
        progressed = true;
    }

    // 4. Drop what is confirmed gone from state.json.
    if !gone.is_empty() {
        gone.sort();
        gone.dedup();
        fence(ctx, held, &sr.stack).await?;
        remove_resources(&ctx.store, &sr.stack, &sr.region, loaded, &gone).await?;
    }

    // 5. Settled? Nothing in flight, nothing ready or waiting (or a stop was requested).
    let (finished, earliest_ms) = settled(sr, &graph, stop);
    Ok(StackStep {
        progressed,
        finished,
        earliest_ms,
    })
}

/// Polls the deletes in flight whose expected completion has come, and applies their
/// answers; says whether any answer changed the run.
async fn poll_due(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    resources: &Map<String, Value>,
    max_parallel: usize,
    gone: &mut Vec<String>,
) -> bool {
    let now = ctx.now();
    let due: Vec<(String, Flight)> = sr
        .in_flight
        .iter()
        .filter(|(_, f)| f.expected_done_ms <= now)
        .map(|(id, f)| (id.clone(), f.clone()))
        .collect();
    let polled: Vec<(String, Sent, Result<DeleteProgress, DeleteError>)> = stream::iter(due)
        .map(|(id, f)| {
            let entry = resources.get(&id).and_then(Value::as_object).cloned();
            let run_ctx = ctx.run_context(&sr.stack);
            let region = sr.region.clone();
            async move {
                let res = match entry {
                    // Already dropped from state by an earlier attempt of this wave.
                    None => Ok(DeleteProgress::AlreadyGone),
                    Some(entry) => {
                        let req = delete_request(
                            &id,
                            &entry,
                            &region,
                            f.attempt,
                            run_ctx,
                            f.options.clone(),
                        );
                        ctx.registry.poll(&req, &f.handle).await
                    }
                };
                let sent = Sent {
                    attempt: f.attempt,
                    options: f.options,
                };
                (id, sent, res)
            }
        })
        .buffer_unordered(max_parallel)
        .collect()
        .await;
    let mut progressed = false;
    for (id, sent, res) in polled {
        progressed |= apply(ctx, sr, &id, sent, res, gone);
    }
    progressed
}

/// Decides each ready record. A record that needs a delete call is first marked
/// dispatched and the mark saved (write-ahead); the call goes out on the next pass, so a
/// crash between the call and saving its answer leaves a mark, and the call is sent again
/// with the same attempt (same ClientToken: the first request resumes). After a stop
/// request nothing new starts, but marked calls are still sent: their delete may already
/// be running in AWS, and only its handle tells how it ends. Returns whether the run
/// changed, and the requests of the records marked by an earlier pass (to send now).
fn decide_ready(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    ready: Vec<String>,
    resources: &Map<String, Value>,
    children: &BTreeMap<String, RunResult>,
    stop: bool,
    gone: &mut Vec<String>,
) -> (bool, Vec<DeleteRequest>) {
    let mut progressed = false;
    let mut to_start: Vec<DeleteRequest> = Vec::new();
    let now = ctx.now();
    let opts = DecideOptions {
        skip_final_snapshot: ctx.skip_final_snapshot,
        now_ms: now,
    };
    let ready: Vec<String> = ready
        .into_iter()
        .filter(|id| !stop || sr.dispatched.contains_key(id))
        .filter(|id| sr.retries.get(id).is_none_or(|r| r.not_before_ms <= now))
        .collect();
    for id in ready {
        let entry = resources
            .get(&id)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let attempt = sr
            .dispatched
            .get(&id)
            .copied()
            .unwrap_or_else(|| sr.retries.get(&id).map_or(0, |r| r.attempts));
        let outcome = match decide_with(&entry, opts, &ctx.registry) {
            Decision::Retain => Some(RowOutcome::Retained),
            Decision::NoOp => Some(RowOutcome::Deleted),
            Decision::Fail { error } => Some(RowOutcome::Failed {
                error: error.to_string(),
            }),
            Decision::Skip { reason } => Some(RowOutcome::Skipped {
                reason: reason.to_string(),
            }),
            Decision::Delete(plan) if plan.route == Route::NestedStack => {
                Some(nested_outcome(&child_stack_name(&sr.stack, &id), children))
            }
            Decision::Delete(plan) => {
                let options = DeleteOptions {
                    final_snapshot: plan.final_snapshot,
                    remove_protection: ctx.remove_protection,
                };
                let req = delete_request(
                    &id,
                    &entry,
                    &sr.region,
                    attempt,
                    ctx.run_context(&sr.stack),
                    options,
                );
                match refuse_unhonoured_snapshot(&ctx.registry, plan.route, &req) {
                    Some(error) => Some(RowOutcome::Failed { error }),
                    None if sr.dispatched.contains_key(&id) => {
                        to_start.push(req);
                        None
                    }
                    None => {
                        sr.dispatched.insert(id.clone(), attempt);
                        progressed = true;
                        None
                    }
                }
            }
        };
        if let Some(o) = outcome {
            if o.removes_record() {
                gone.push(id.clone());
            }
            sr.retries.remove(&id);
            sr.dispatched.remove(&id);
            sr.outcomes.insert(id, o);
            progressed = true;
        }
    }
    (progressed, to_start)
}

/// Sends the delete calls of records marked by an earlier pass, and applies their
/// answers; a handle (or an outcome) replaces the mark.
async fn send_marked(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    to_start: Vec<DeleteRequest>,
    max_parallel: usize,
    gone: &mut Vec<String>,
) {
    let started: Vec<(String, Sent, Result<DeleteProgress, DeleteError>)> = stream::iter(to_start)
        .map(|req| async move {
            let res = ctx.registry.start(&req).await;
            let sent = Sent {
                attempt: req.attempt,
                options: req.options,
            };
            (req.logical_id, sent, res)
        })
        .buffer_unordered(max_parallel)
        .collect()
        .await;
    for (id, sent, res) in started {
        apply(ctx, sr, &id, sent, res, gone);
        sr.dispatched.remove(&id);
    }
}

/// Whether the stack is settled (nothing in flight, nothing ready or waiting; after a
/// stop request, marked calls still to be sent again keep it open), and the earliest
/// time something of it is due.
fn settled(sr: &StackRun, graph: &DeleteGraph, stop: bool) -> (bool, Option<u64>) {
    let flying: BTreeSet<String> = sr.in_flight.keys().cloned().collect();
    let after = ready_set(graph, &sr.outcomes, &flying);
    let finished = if stop {
        sr.in_flight.is_empty() && !sr.dispatched.keys().any(|id| after.ready.contains(id))
    } else {
        after.is_finished() && after.blocked.is_empty()
    };
    let earliest_ms = sr
        .in_flight
        .values()
        .map(|f| f.expected_done_ms)
        .chain(
            sr.retries
                .iter()
                .filter(|(id, _)| !sr.outcomes.contains_key(*id))
                .map(|(_, r)| r.not_before_ms),
        )
        .min();
    (finished, earliest_ms)
}

/// Planned records missing from `resources` (we hold the lock: only this run removes
/// records, and only after a confirmed delete) count as deleted.
fn settle_removed(sr: &mut StackRun, resources: &Map<String, Value>) {
    for p in &sr.planned {
        if !resources.contains_key(&p.logical_id) && !sr.outcomes.contains_key(&p.logical_id) {
            sr.in_flight.remove(&p.logical_id);
            sr.retries.remove(&p.logical_id);
            sr.dispatched.remove(&p.logical_id);
            sr.outcomes
                .insert(p.logical_id.clone(), RowOutcome::Deleted);
        }
    }
}

/// The attempt and options a delete call was sent with.
struct Sent {
    attempt: u32,
    options: DeleteOptions,
}

/// The refusal for a delete that must take a final snapshot no deleter on its route can
/// take (docs/destroy.md, "One record in a wave" step 3: never lose the snapshot silently): only an SDK
/// deleter that declares the capability takes one.
fn refuse_unhonoured_snapshot(
    registry: &Registry,
    route: Route,
    req: &DeleteRequest,
) -> Option<String> {
    req.options.final_snapshot.as_ref()?;
    let why = match route {
        Route::Sdk
            if registry
                .sdk_deleter(&req.resource_type)
                .is_some_and(|c| c.final_snapshot) =>
        {
            return None
        }
        Route::CloudControl => cdkd_deleters::cloudcontrol::NO_SNAPSHOT_PARAMETER,
        _ => "cdkd-flow has no deleter for this type that takes a final snapshot",
    };
    Some(flatten_str(
        &cdkd_deleters::guard::refuse_final_snapshot(req, why)
            .err()?
            .message,
    ))
}

/// Records what a start or poll answered. Returns whether a record was settled.
fn apply(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    id: &str,
    sent: Sent,
    res: Result<DeleteProgress, DeleteError>,
    gone: &mut Vec<String>,
) -> bool {
    let Sent { attempt, options } = sent;
    let settle = |sr: &mut StackRun, outcome: RowOutcome| {
        sr.in_flight.remove(id);
        sr.retries.remove(id);
        sr.dispatched.remove(id);
        sr.outcomes.insert(id.to_string(), outcome);
    };
    match res {
        Ok(DeleteProgress::Done) => {
            settle(sr, RowOutcome::Deleted);
            gone.push(id.to_string());
            true
        }
        Ok(DeleteProgress::DoneWithWarning { warning }) => {
            settle(sr, RowOutcome::Deleted);
            sr.notes.insert(id.to_string(), flatten_str(&warning));
            gone.push(id.to_string());
            true
        }
        Ok(DeleteProgress::AlreadyGone) => {
            settle(sr, RowOutcome::AlreadyGone);
            gone.push(id.to_string());
            true
        }
        Ok(DeleteProgress::InFlight {
            handle,
            expected_done_ms,
        }) => {
            sr.in_flight.insert(
                id.to_string(),
                Flight {
                    handle,
                    expected_done_ms,
                    attempt,
                    options,
                },
            );
            false
        }
        Err(e) if e.kind == DeleteErrorKind::Skipped => {
            settle(
                sr,
                RowOutcome::Skipped {
                    reason: flatten_str(&e.to_string()),
                },
            );
            true
        }
        Err(e) if e.retryable && attempt + 1 < ctx.deps.budgets.max_attempts => {
            sr.in_flight.remove(id);
            sr.dispatched.remove(id);
            let delay = 2_000u64.saturating_mul(1 << attempt.min(6));
            sr.retries.insert(
                id.to_string(),
                Retry {
                    attempts: attempt + 1,
                    not_before_ms: ctx.now() + delay,
                    last_error: flatten_str(&e.to_string()),
                },
            );
            false
        }
        Err(e) => {
            settle(
                sr,
                RowOutcome::Failed {
                    error: flatten_str(&e.to_string()),
                },
            );
            true
        }
    }
}

/// A nested-stack row settles with its child: the child runs earlier in the same run
/// (children first). A child with no record at plan time is already gone.
fn nested_outcome(child: &str, children: &BTreeMap<String, RunResult>) -> RowOutcome {
    match children.get(child) {
        None => RowOutcome::AlreadyGone,
        Some(RunResult::Clean) => RowOutcome::Deleted,
        Some(other) => RowOutcome::Failed {
            error: format!(
                "nested stack {} was not fully destroyed ({}); its state record keeps what is left",
                flatten_str(child),
                match other {
                    RunResult::Interrupted => "interrupted",
                    _ => "some of its resources failed",
                }
            ),
        },
    }
}

/// A settled stack: on a clean run delete its record (after saving any `orphans`
/// entries) and release its lock; otherwise keep the record for a re-run.
async fn finish_stack(
    ctx: &Ctx<'_>,
    sr: &mut StackRun,
    held: &mut Vec<HeldLock>,
    stop: bool,
) -> Result<(), StepError> {
    let preserve = stop || sr.outcomes.values().any(RowOutcome::preserves_state);
    if preserve {
        sr.finished = Some(if stop {
            RunResult::Interrupted
        } else {
            RunResult::Partial
        });
        return Ok(());
    }
    let deleted_here = match ctx.store.get_state(&sr.stack, &sr.region).await? {
        Some(loaded) => {
            // The record goes only while the stack's lock is still the run's.
            fence(ctx, held, &sr.stack).await?;
            if let Some(Value::Array(orphans)) = loaded.record.orphans() {
                if !orphans.is_empty() {
                    // Outside the run folder: nothing expires it (docs/destroy.md, "How a stack finishes").
                    let key = cdkd_core::keys::orphans_key(
                        &ctx.run.prefix,
                        &sr.stack,
                        &sr.region,
                        &ctx.run.run_id,
                    );
                    runs::write(&ctx.store, &key, &Value::Array(orphans.clone())).await?;
                    sr.orphans_key = Some(key);
                }
            }
            ctx.store.delete_state(&sr.stack, &sr.region).await?;
            true
        }
        // An earlier attempt of this step deleted it (and released the lock).
        None => false,
    };
    // The lock goes right after the record, so that a stop in between leaves as short a
    // window as it can with a lock and no record (docs/state-views.md, "A lock without a record" shows it).
    if let Some(pos) = held.iter().position(|h| h.stack == sr.stack) {
        let h = held.remove(pos);
        match ctx.locks.release(&h).await {
            Ok(cdkd_aws::ReleaseOutcome::Released) => {}
            // Checked just before the record went, and gone or another's now: someone
            // removed it in between. Never a silent success (docs/destroy.md, "How a stack finishes").
            Ok(outcome) if deleted_here => {
                sr.lock_note = Some(if outcome == cdkd_aws::ReleaseOutcome::NotOurs {
                    cdkd_core::destroy::next_step::LockGone::Taken
                } else {
                    cdkd_core::destroy::next_step::LockGone::Gone
                });
            }
            Ok(_) => {}
            Err(e) => tracing::warn!("{e}"),
        }
    }
    ctx.store
        .remove_from_exports_index(&sr.stack, &sr.region)
        .await;
    sr.finished = Some(RunResult::Clean);
    Ok(())
}
