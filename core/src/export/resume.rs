//! An interrupted or contested export (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first"): how a run marks the
//! CloudFormation stacks it creates as its own, what the CLI does when it finds a lock or
//! a destination stack before planning (a new run, a resume, a refusal), and what a
//! resumed run finds in flight from what CloudFormation says.

use super::execute::{ChangeSetState, Next, Pending};
use super::phases::Phase;
use super::refusal::ExportRefusal;
use crate::contention::Contention;
use crate::lock::{is_expired, parse_flow_owner, FlowHolder, LockInfo};
use crate::run::RunId;

/// The destination stack's tag naming the cdkd record it was exported from.
pub const RECORD_TAG: &str = "cdkd-flow:record";
/// The destination stack's tag naming the export run that created it.
pub const RUN_TAG: &str = "cdkd-flow:run";

/// The tags every change set of run `run_id` sets on its destination stacks.
pub fn run_tags(record: &str, run_id: &str) -> Vec<(String, String)> {
    vec![
        (RECORD_TAG.to_string(), record.to_string()),
        (RUN_TAG.to_string(), run_id.to_string()),
    ]
}

/// The run that created a stack carrying `tags`, when the stack says it was exported
/// from the cdkd record `record`.
pub fn owning_run(tags: &[(String, String)], record: &str) -> Option<String> {
    let get = |k: &str| {
        tags.iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    };
    (get(RECORD_TAG) == Some(record))
        .then(|| get(RUN_TAG).filter(|r| !r.is_empty()).map(str::to_string))
        .flatten()
}

/// Whether the run holding a lock is still running, as far as the CLI can tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Liveness {
    /// A deployed execution that is RUNNING, or a local process that is alive.
    Alive,
    /// A deployed execution that ended, or a local process gone from this host.
    Ended,
    /// A local run of another host, or an execution that cannot be described.
    Unknown,
}

/// What the CLI found before planning an export of `stack`.
#[derive(Clone, Debug)]
pub struct Found<'a> {
    pub stack: &'a str,
    /// The root's lock, when there is one.
    pub lock: Option<&'a LockInfo>,
    /// The liveness of the lock's holder, when the holder is a cdkd-flow run.
    pub liveness: Liveness,
    /// The nested children's locks with the liveness of their holders. A run killed
    /// between two lock writes (taking them, or releasing them in its cleanup) leaves a
    /// child's lock held by an ended run while the root's is gone or another's.
    pub child_locks: &'a [(&'a LockInfo, Liveness)],
    /// The destination stack's status and tags, when it exists.
    pub destination: Option<(&'a str, &'a [(String, String)])>,
    /// The runs named by the nested children's destination stacks that say they are
    /// their record's (a tree whose root was not submitted yet).
    pub child_runs: &'a [String],
    /// Now on S3's clock, which the locks are judged on (docs/state-and-lock.md, "Lock time is S3's").
    pub now_ms: i64,
}

/// What the export command does (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// No run of this record stands in the way: plan a new run. `take_over`: the owners
    /// of ended export runs' locks of the tree (a run that created no stack) the new run
    /// replaces.
    Fresh { take_over: Vec<String> },
    /// The destination stack is this record's run `run_id`, interrupted: resume it,
    /// replacing the locks of the tree whose holders `take_over` ended.
    Resume {
        run_id: RunId,
        take_over: Vec<String>,
    },
    /// A live cdkd-flow export holds the stack.
    Live { holder: FlowHolder, known: bool },
    /// Someone else holds the lock (cdkd, a destroy, an ended run of another kind): the
    /// contention refusal.
    Locked,
    /// A stack of the destination's name that no run of this record created.
    NotOurs { status: String },
}

/// Decides what the export command does with what it found (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
pub fn verdict(found: &Found) -> Verdict {
    let mut take_over = Vec::new();
    if let Some(lock) = found.lock.filter(|l| !is_expired(l, found.now_ms)) {
        let export = lock.operation.as_deref() == Some("export");
        match parse_flow_owner(&lock.owner) {
            Some(holder) if export => {
                if let Some(live) = export_holder(lock, holder, found.liveness, &mut take_over) {
                    return live;
                }
            }
            _ => return Verdict::Locked,
        }
    }
    // A child held by an export run: that run's too, ended or not. A child held by anyone
    // else is the lock step's refusal, which names the child.
    for (lock, liveness) in found.child_locks {
        if is_expired(lock, found.now_ms) || lock.operation.as_deref() != Some("export") {
            continue;
        }
        if let Some(holder) = parse_flow_owner(&lock.owner) {
            if let Some(live) = export_holder(lock, holder, *liveness, &mut take_over) {
                return live;
            }
        }
    }
    match found.destination {
        None => match found.child_runs.first() {
            Some(run_id) => Verdict::Resume {
                run_id: RunId::from(run_id.as_str()),
                take_over,
            },
            None => Verdict::Fresh { take_over },
        },
        Some((status, tags)) => match owning_run(tags, found.stack) {
            Some(run_id) => Verdict::Resume {
                run_id: run_id.into(),
                take_over,
            },
            None => Verdict::NotOurs {
                status: status.to_string(),
            },
        },
    }
}

/// An export run's unexpired lock: a live (or unknowable) holder is the verdict; an
/// ended one is added to the owners the run replaces.
fn export_holder(
    lock: &LockInfo,
    holder: FlowHolder,
    liveness: Liveness,
    take_over: &mut Vec<String>,
) -> Option<Verdict> {
    match liveness {
        Liveness::Ended => {
            if !take_over.contains(&lock.owner) {
                take_over.push(lock.owner.clone());
            }
            None
        }
        Liveness::Alive => Some(Verdict::Live {
            holder,
            known: true,
        }),
        Liveness::Unknown => Some(Verdict::Live {
            holder,
            known: false,
        }),
    }
}

/// The refusal for a live run: who holds the stack, where it stands (`phase`: the
/// run's last logged step, when known), and (in its words) the command that watches it.
/// `known`: the holder was seen running; otherwise it cannot be checked from here.
pub fn live_refusal(
    stack: &str,
    holder: &FlowHolder,
    known: bool,
    phase: Option<&str>,
) -> ExportRefusal {
    ExportRefusal::LiveRun {
        stack: stack.to_string(),
        holder: holder.clone(),
        known,
        phase: phase.map(str::to_string),
    }
}

/// The refusal for a lock anyone but an export run holds, before planning: the
/// contention (holder, operation, since when, expiry, the force-unlock command).
pub fn locked_refusal(stack: &str, contention: Contention) -> ExportRefusal {
    ExportRefusal::Locked {
        stack: stack.to_string(),
        contention: Box::new(contention),
    }
}

/// The refusal for a destination stack that no run of this record created (it has no
/// [`RECORD_TAG`] tag naming the record). Never advises deleting it: it may own
/// resources.
pub fn not_ours_refusal(stack: &str, cfn_name: &str, status: &str) -> ExportRefusal {
    ExportRefusal::NotOurs {
        stack: stack.to_string(),
        cfn_stack: cfn_name.to_string(),
        status: status.to_string(),
    }
}

/// Whether run `run_id` may delete the destination stack of `record` it created, after
/// its import failed: only a stack that holds nothing (REVIEW_IN_PROGRESS, which no
/// executed change set ever leaves, and no resource listed) and says it is this run's.
/// Anything else may own the resources, and deleting it could delete them.
pub fn withdrawable(
    status: &str,
    tags: &[(String, String)],
    record: &str,
    run_id: &str,
    resources: usize,
) -> bool {
    status == "REVIEW_IN_PROGRESS"
        && resources == 0
        && owning_run(tags, record).as_deref() == Some(run_id)
}

/// The phase of a stack's next piece of work.
pub fn phase_of(work: Next) -> Option<Phase> {
    match work {
        Next::Import => Some(Phase::Import),
        Next::Adopt => Some(Phase::Adopt),
        Next::Phase2 => Some(Phase::Update),
        Next::Flip => Some(Phase::Flip),
        Next::Wait | Next::Execute | Next::Cleanup => None,
    }
}

/// What a resumed run finds of one stack's next piece of work `phase`, from its change
/// set of this run (its ARN and state, when it exists) and the stack's status (when the
/// stack exists): `Some((pending, ready))` when CloudFormation holds work of the run in
/// flight, `None` when the work has not started (the run starts it; every step finds its
/// own earlier work).
pub fn resumed_in_flight(
    phase: Phase,
    change_set: Option<(&str, &ChangeSetState)>,
    stack_status: Option<&str>,
) -> Option<(Pending, bool)> {
    if stack_status.is_some_and(super::execute::still_running) {
        return Some((Pending::Stack { phase }, false));
    }
    let (arn, state) = change_set?;
    let cs = |ready| {
        Some((
            Pending::ChangeSet {
                phase,
                arn: arn.to_string(),
            },
            ready,
        ))
    };
    match state {
        ChangeSetState::Executed => Some((Pending::Stack { phase }, false)),
        ChangeSetState::Ready => cs(true),
        // Still being created, or settled without being executed: the poll reads it
        // again and decides (an UPDATE with nothing to change is done, a failure stops).
        ChangeSetState::Pending | ChangeSetState::NoChanges | ChangeSetState::Failed(_) => {
            cs(false)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::parse_lock;

    fn lock(owner: &str, op: &str, expires: i64) -> LockInfo {
        let body = format!(
            r#"{{"owner":"{owner}","timestamp":1,"expiresAt":{expires},"operation":"{op}"}}"#
        );
        parse_lock(body.as_bytes()).unwrap().unwrap()
    }

    fn found<'a>(
        lock: Option<&'a LockInfo>,
        liveness: Liveness,
        destination: Option<(&'a str, &'a [(String, String)])>,
    ) -> Found<'a> {
        Found {
            stack: "Orders",
            lock,
            liveness,
            destination,
            child_locks: &[],
            child_runs: &[],
            now_ms: 1_000,
        }
    }

    #[test]
    fn same_command_same_run_a_tree_whose_children_alone_were_imported_resumes() {
        let runs = vec!["r1".to_string()];
        let mut f = found(None, Liveness::Unknown, None);
        f.child_runs = &runs;
        assert_eq!(
            verdict(&f),
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec![]
            }
        );
    }

    #[test]
    fn run_tags_name_the_record_and_the_run_and_read_back() {
        let tags = run_tags("Orders", "export-Orders-1");
        assert_eq!(
            owning_run(&tags, "Orders").as_deref(),
            Some("export-Orders-1")
        );
        assert_eq!(owning_run(&tags, "Other"), None);
        assert_eq!(owning_run(&[], "Orders"), None);
    }

    #[test]
    fn same_command_same_run_an_ended_runs_stack_resumes_taking_over_its_lock() {
        let l = lock("cdkd-flow:r1@h:7", "export", 9_999);
        let tags = run_tags("Orders", "r1");
        let v = verdict(&found(
            Some(&l),
            Liveness::Ended,
            Some(("IMPORT_COMPLETE", &tags)),
        ));
        assert_eq!(
            v,
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec!["cdkd-flow:r1@h:7".into()]
            }
        );
    }

    #[test]
    fn same_command_same_run_a_run_killed_between_its_releases_resumes_taking_over_its_childrens_locks(
    ) {
        // The cleanup released the root's lock and was killed before the children's.
        let child = lock("cdkd-flow:r1@h:7", "export", 9_999);
        let children = [(&child, Liveness::Ended), (&child, Liveness::Ended)];
        let tags = run_tags("Orders", "r1");
        let mut f = found(None, Liveness::Unknown, Some(("IMPORT_COMPLETE", &tags)));
        f.child_locks = &children;
        assert_eq!(
            verdict(&f),
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec!["cdkd-flow:r1@h:7".into()]
            }
        );
    }

    #[test]
    fn same_command_same_run_a_resume_killed_while_taking_the_locks_is_resumed_over_both_holders() {
        // The resume (pid 8) took the root's lock and was killed before the children's,
        // still the killed run's (pid 7).
        let root = lock("cdkd-flow:r1@h:8", "export", 9_999);
        let child = lock("cdkd-flow:r1@h:7", "export", 9_999);
        let children = [(&child, Liveness::Ended)];
        let tags = run_tags("Orders", "r1");
        let mut f = found(
            Some(&root),
            Liveness::Ended,
            Some(("IMPORT_COMPLETE", &tags)),
        );
        f.child_locks = &children;
        assert_eq!(
            verdict(&f),
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec!["cdkd-flow:r1@h:8".into(), "cdkd-flow:r1@h:7".into()]
            }
        );
    }

    #[test]
    fn dead_or_alive_a_live_runs_lock_on_a_child_is_never_taken_over() {
        let tags = run_tags("Orders", "r1");
        for (liveness, known) in [(Liveness::Alive, true), (Liveness::Unknown, false)] {
            let child = lock("cdkd-flow:r1@h:7", "export", 9_999);
            let children = [(&child, liveness)];
            let mut f = found(None, Liveness::Unknown, Some(("IMPORT_COMPLETE", &tags)));
            f.child_locks = &children;
            let v = verdict(&f);
            assert!(
                matches!(v, Verdict::Live { known: k, .. } if k == known),
                "{v:?}"
            );
        }
    }

    #[test]
    fn export_reads_the_lock_first_a_child_held_by_anyone_else_is_left_to_the_lock_step() {
        // Never replaced: the lock step's refusal names the child and its holder.
        for (owner, op) in [("alice@laptop:42", "deploy"), ("cdkd-flow:d1", "destroy")] {
            let child = lock(owner, op, 9_999);
            let children = [(&child, Liveness::Ended)];
            let mut f = found(None, Liveness::Unknown, None);
            f.child_locks = &children;
            assert_eq!(verdict(&f), Verdict::Fresh { take_over: vec![] });
        }
    }

    #[test]
    fn same_command_same_run_an_aborted_runs_stack_without_a_lock_resumes() {
        let tags = run_tags("Orders", "r1");
        let v = verdict(&found(
            None,
            Liveness::Unknown,
            Some(("IMPORT_COMPLETE", &tags)),
        ));
        assert_eq!(
            v,
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec![]
            }
        );
    }

    #[test]
    fn dead_or_alive_a_live_runs_lock_is_never_taken_over() {
        let l = lock("cdkd-flow:r1", "export", 9_999);
        let tags = run_tags("Orders", "r1");
        let v = verdict(&found(
            Some(&l),
            Liveness::Alive,
            Some(("IMPORT_IN_PROGRESS", &tags)),
        ));
        assert!(matches!(v, Verdict::Live { known: true, .. }), "{v:?}");
        let v = verdict(&found(Some(&l), Liveness::Unknown, None));
        assert!(matches!(v, Verdict::Live { known: false, .. }), "{v:?}");
    }

    #[test]
    fn dead_or_alive_an_expired_lock_counts_as_ended() {
        let l = lock("cdkd-flow:r1@elsewhere:7", "export", 10);
        let tags = run_tags("Orders", "r1");
        let v = verdict(&found(
            Some(&l),
            Liveness::Unknown,
            Some(("IMPORT_COMPLETE", &tags)),
        ));
        assert_eq!(
            v,
            Verdict::Resume {
                run_id: "r1".into(),
                take_over: vec![]
            }
        );
    }

    #[test]
    fn export_reads_the_lock_first_any_other_holder_is_refused() {
        for (owner, op) in [
            ("alice@laptop:42", "deploy"),
            ("cdkd-flow:d1", "destroy"),
            ("cdkd-flow:d1@h:1", "destroy"),
        ] {
            let l = lock(owner, op, 9_999);
            assert_eq!(
                verdict(&found(Some(&l), Liveness::Ended, None)),
                Verdict::Locked
            );
        }
    }

    #[test]
    fn export_reads_the_lock_first_the_refusal_says_before_planning() {
        let ctx = crate::contention::ContentionContext {
            subject: crate::contention::Subject::Stack,
            stack: "Orders",
            region: Some("us-east-1"),
            profile: None,
            bucket: Some("b"),
            prefix: "cdkd",
        };
        let held = lock("cdkd:laptop", "deploy", 9_999);
        let c = Contention::new(&ctx, Some(&held), 1_000);
        let r = locked_refusal("Orders", c.clone());
        assert_eq!(
            r,
            ExportRefusal::Locked {
                stack: "Orders".into(),
                contention: Box::new(c.clone())
            }
        );
        let r = r.to_string();
        assert_eq!(r, format!("export of Orders refused before planning: {c}"));
        assert!(
            r.starts_with("export of Orders refused before planning: Could not acquire lock"),
            "{r}"
        );
    }

    #[test]
    fn an_ended_export_that_created_no_stack_is_replaced_by_a_new_run() {
        let l = lock("cdkd-flow:r1", "export", 9_999);
        assert_eq!(
            verdict(&found(Some(&l), Liveness::Ended, None)),
            Verdict::Fresh {
                take_over: vec!["cdkd-flow:r1".into()]
            }
        );
    }

    #[test]
    fn no_message_advises_deleting_a_stack_that_is_nobodys_run() {
        let v = verdict(&found(
            None,
            Liveness::Unknown,
            Some(("UPDATE_COMPLETE", &[])),
        ));
        assert_eq!(
            v,
            Verdict::NotOurs {
                status: "UPDATE_COMPLETE".into()
            }
        );
        let r = not_ours_refusal("Orders", "Orders", "UPDATE_COMPLETE");
        assert_eq!(
            r,
            ExportRefusal::NotOurs {
                stack: "Orders".into(),
                cfn_stack: "Orders".into(),
                status: "UPDATE_COMPLETE".into()
            }
        );
        let r = r.to_string();
        assert!(r.contains("--cfn-stack-name"), "{r}");
        assert!(!r.to_lowercase().contains("delete"), "{r}");
    }

    #[test]
    fn live_refusal_names_the_run_and_the_watch_command() {
        let h = FlowHolder::Local {
            run_id: "r1".into(),
            host: "h".into(),
            pid: 7,
        };
        let r = live_refusal("Orders", &h, true, Some("import: created change set"));
        assert_eq!(
            r,
            ExportRefusal::LiveRun {
                stack: "Orders".into(),
                holder: h.clone(),
                known: true,
                phase: Some("import: created change set".into())
            }
        );
        let r = r.to_string();
        assert!(
            r.contains("run r1") && r.contains("cdkd-flow runs watch r1 --local"),
            "{r}"
        );
        assert!(r.contains("process 7"), "{r}");
        assert!(
            !r.to_lowercase().contains("delete") && !r.contains("force-unlock"),
            "{r}"
        );
        let d = FlowHolder::Deployed { run_id: "x".into() };
        let r = live_refusal("Orders", &d, true, None).to_string();
        assert!(r.ends_with("cdkd-flow runs watch x"), "{r}");
    }

    #[test]
    fn no_message_advises_deleting_only_an_empty_stack_of_this_run_is_withdrawn() {
        let tags = run_tags("Orders", "r1");
        assert!(withdrawable("REVIEW_IN_PROGRESS", &tags, "Orders", "r1", 0));
        assert!(!withdrawable(
            "REVIEW_IN_PROGRESS",
            &tags,
            "Orders",
            "r1",
            1
        ));
        assert!(!withdrawable("IMPORT_COMPLETE", &tags, "Orders", "r1", 0));
        assert!(!withdrawable(
            "IMPORT_ROLLBACK_COMPLETE",
            &tags,
            "Orders",
            "r1",
            0
        ));
        assert!(!withdrawable(
            "REVIEW_IN_PROGRESS",
            &tags,
            "Orders",
            "r2",
            0
        ));
        assert!(!withdrawable("REVIEW_IN_PROGRESS", &[], "Orders", "r1", 0));
    }

    #[test]
    fn resumed_in_flight_follows_cloudformation() {
        let p = Phase::Import;
        assert_eq!(resumed_in_flight(p, None, None), None);
        assert_eq!(resumed_in_flight(p, None, Some("IMPORT_COMPLETE")), None);
        assert_eq!(
            resumed_in_flight(p, None, Some("IMPORT_IN_PROGRESS")),
            Some((Pending::Stack { phase: p }, false))
        );
        let executed = ChangeSetState::Executed;
        assert_eq!(
            resumed_in_flight(p, Some(("arn", &executed)), Some("IMPORT_COMPLETE")),
            Some((Pending::Stack { phase: p }, false))
        );
        let ready = ChangeSetState::Ready;
        assert_eq!(
            resumed_in_flight(p, Some(("arn", &ready)), Some("REVIEW_IN_PROGRESS")),
            Some((
                Pending::ChangeSet {
                    phase: p,
                    arn: "arn".into()
                },
                true
            ))
        );
        let pending = ChangeSetState::Pending;
        assert!(matches!(
            resumed_in_flight(p, Some(("arn", &pending)), Some("REVIEW_IN_PROGRESS")),
            Some((Pending::ChangeSet { .. }, false))
        ));
        assert_eq!(
            resumed_in_flight(Phase::Flip, None, Some("UPDATE_IN_PROGRESS")),
            Some((Pending::Stack { phase: Phase::Flip }, false))
        );
    }

    #[test]
    fn flow_owner_forms_read_back() {
        use crate::lock::{flow_owner, local_flow_owner};
        assert_eq!(
            parse_flow_owner(&flow_owner("export-A-1")),
            Some(FlowHolder::Deployed {
                run_id: "export-A-1".into()
            })
        );
        assert_eq!(
            parse_flow_owner(&local_flow_owner("export-A-1", "box.local", 42)),
            Some(FlowHolder::Local {
                run_id: "export-A-1".into(),
                host: "box.local".into(),
                pid: 42
            })
        );
        assert_eq!(parse_flow_owner("alice@laptop:42"), None);
        assert_eq!(parse_flow_owner("cdkd-flow:"), None);
        assert_eq!(parse_flow_owner("cdkd-flow:a@b:notapid"), None);
    }
}
