//! How long run folders live (docs/runs.md): the lifecycle rule `runs expire` sets, the
//! `--older-than` durations, the grouping of listed objects into run folders, and prune's
//! keep/delete verdict (`cdkd_core::retention`).
use cdkd_core::retention::*;
use cdkd_core::run::{Outcome, RunKind};
use cdkd_core::runs::{Interruption, LocalState, Unseen};

const DAY: i64 = 86_400_000;
const NOW: i64 = 1_795_965_752_000;

fn folder(id: &str, files: &[&str], age_days: i64) -> RunFolder {
    let objects = files
        .iter()
        .map(|f| ListedObject {
            key: format!("cdkd/_runs/{id}/{f}"),
            size: 100,
            last_modified_ms: NOW - age_days * DAY,
        })
        .collect();
    run_folders("cdkd", objects).remove(0)
}

fn facts(kind: RunKind, status: RunStatus) -> RunFacts {
    RunFacts {
        kind: Some(kind),
        plan_only: false,
        status,
    }
}

fn ended(o: &str) -> RunStatus {
    RunStatus::Ended {
        outcome: Some(o.into()),
    }
}

#[test]
fn the_rule_covers_the_run_prefix_with_its_own_id_and_refuses_below_the_safe_minimum() {
    let r = runs_rule("cdkd", 90).unwrap();
    assert_eq!(r.id, "cdkd-flow-runs:cdkd");
    assert_eq!(r.prefix, "cdkd/_runs/");
    assert_eq!(
        (r.expiration_days, r.noncurrent_days, r.abort_multipart_days),
        (90, 1, 1)
    );
    assert_eq!(runs_rule("team/a", 8).unwrap().prefix, "team/a/_runs/");
    assert_eq!(
        runs_rule("cdkd", 7).unwrap_err(),
        RetentionError::TooShort { days: 7, min: 8 }
    );
    assert!(runs_rule("cdkd", 0).is_err());
    assert!(matches!(
        runs_rule(&"p".repeat(300), 90),
        Err(RetentionError::RuleIdTooLong(_))
    ));
}

#[test]
fn a_short_expiry_is_accepted_with_a_warning_about_resuming_exports() {
    let w = expiry_warning(8).unwrap().to_string();
    assert!(
        w.contains("expire 8 days after the run STARTED, even if it was resumed since"),
        "{w}"
    );
    assert!(
        w.contains("resumed and finished within 8 days of its start"),
        "{w}"
    );
    assert_eq!(expiry_warning(30), None);
    assert_eq!(expiry_warning(90), None);
}

#[test]
fn the_rule_is_added_replaced_or_left_unchanged_by_its_id() {
    let want = runs_rule("cdkd", 90).unwrap();
    assert_eq!(rule_change(None, &want), RuleChange::Add);
    let same = ObservedRule {
        id: Some(want.id.clone()),
        enabled: true,
        prefix: Some("cdkd/_runs/".into()),
        scope: Some("cdkd/_runs/".into()),
        sized: false,
        expiration_days: Some(90),
        noncurrent_days: Some(1),
        abort_multipart_days: Some(1),
        other_parts: false,
    };
    assert_eq!(rule_change(Some(&same), &want), RuleChange::Unchanged);
    for changed in [
        ObservedRule {
            expiration_days: Some(30),
            ..same.clone()
        },
        ObservedRule {
            enabled: false,
            ..same.clone()
        },
        ObservedRule {
            other_parts: true,
            ..same.clone()
        },
        ObservedRule {
            prefix: Some("cdkd/".into()),
            ..same.clone()
        },
        ObservedRule {
            noncurrent_days: None,
            ..same.clone()
        },
    ] {
        assert_eq!(rule_change(Some(&changed), &want), RuleChange::Replace);
    }
}

#[test]
fn another_rule_expiring_the_run_prefix_sooner_is_named() {
    let want = runs_rule("cdkd", 90).unwrap();
    let rule = |id: &str, prefix: Option<&str>, days: Option<i32>| ObservedRule {
        id: Some(id.into()),
        enabled: true,
        prefix: prefix.map(str::to_string),
        scope: prefix.map(str::to_string),
        expiration_days: days,
        ..ObservedRule::default()
    };
    let w: Vec<String> = sooner_rules(
        &[
            rule("whole-bucket", Some(""), Some(14)),
            rule("state", Some("cdkd/"), Some(365)),
            rule("logs", Some("logs/"), Some(1)),
            rule("tags", None, Some(1)),
            rule("cdkd-flow-runs:cdkd", Some("cdkd/_runs/"), Some(10)),
        ],
        &want,
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0].contains("'whole-bucket'") && w[0].contains("after 14 days"));
}

#[test]
fn older_than_takes_the_cleanups_durations_and_refuses_bad_or_zero() {
    assert_eq!(parse_older_than("30d"), Ok(30 * DAY));
    assert_eq!(parse_older_than("12h"), Ok(12 * 3_600_000));
    assert_eq!(parse_older_than("1d12h"), Ok(DAY + 12 * 3_600_000));
    assert_eq!(parse_older_than("2w"), Ok(14 * DAY));
    assert_eq!(
        parse_older_than("soon"),
        Err(RetentionError::BadOlderThan("soon".into()))
    );
    assert!(matches!(
        parse_older_than("-3d"),
        Err(RetentionError::BadOlderThan(_))
    ));
    assert!(matches!(
        parse_older_than(""),
        Err(RetentionError::BadOlderThan(_))
    ));
    assert!(matches!(
        parse_older_than("0d"),
        Err(RetentionError::ZeroOlderThan(_))
    ));
}

#[test]
fn listed_objects_group_by_run_folder_with_bytes_and_last_write() {
    let o = |k: &str, size: i64, at: i64| ListedObject {
        key: k.into(),
        size,
        last_modified_ms: at,
    };
    let f = run_folders(
        "cdkd",
        vec![
            o("cdkd/_runs/b/run.json", 10, 5),
            o("cdkd/_runs/a/templates/App.json", 100, 1),
            o("cdkd/_runs/a/progress.json", 20, 9),
            o("cdkd/_runs/stray.json", 1, 1),
            o("cdkd/_runs//x.json", 1, 1),
            o("cdkd/App/us-east-1/state.json", 1, 1),
        ],
    );
    assert_eq!(f.len(), 2);
    assert_eq!(f[0].run_id, "a");
    assert_eq!(
        (f[0].bytes, f[0].last_write_ms, f[0].keys.len()),
        (120, 9, 2)
    );
    assert!(f[0].files.progress && !f[0].files.run_json);
    assert!(!f[0].files.only_uploads());
    assert!(f[1].files.run_json);
}

#[test]
fn a_folder_written_within_the_cutoff_is_recent_whatever_its_run() {
    let f = folder("destroy-A-1", &["run.json", "report.json"], 2);
    let v = verdict(
        &f,
        &facts(RunKind::Destroy, ended("destroyed")),
        NOW,
        3 * DAY,
        true,
    );
    assert_eq!(v, Verdict::Recent);
}

#[test]
fn an_ended_destroy_older_than_the_cutoff_is_deleted() {
    let f = folder(
        "destroy-A-1",
        &["run.json", "progress.json", "report.json"],
        40,
    );
    for outcome in ["destroyed", "aborted", "stopped", "partial"] {
        let v = verdict(
            &f,
            &facts(RunKind::Destroy, ended(outcome)),
            NOW,
            30 * DAY,
            false,
        );
        assert_eq!(v, Verdict::Delete, "{outcome}");
    }
    let interrupted = RunStatus::Interrupted {
        why: Interruption::CtrlC,
    };
    assert_eq!(
        verdict(
            &f,
            &facts(RunKind::Destroy, interrupted),
            NOW,
            30 * DAY,
            false
        ),
        Verdict::Delete
    );
}

/// A list of orphaned resources an earlier version saved in the run's folder is the only
/// record of resources still in AWS: its folder is never pruned, even with
/// --include-resumable.
#[test]
fn an_ended_destroy_whose_folder_holds_an_orphans_list_is_kept() {
    let f = folder(
        "destroy-A-1",
        &["run.json", "progress.json", "report.json", "orphans/A.json"],
        40,
    );
    let v = verdict(
        &f,
        &facts(RunKind::Destroy, ended("destroyed")),
        NOW,
        30 * DAY,
        true,
    );
    assert_eq!(v, Verdict::Keep(Keep::Orphans));
    assert!(Keep::Orphans.to_string().contains("orphaned resources"));
}

#[test]
fn a_running_or_approval_waiting_or_unknown_run_is_kept_however_old() {
    let f = folder(
        "export-A-1",
        &["run.json", "plan.json", "approval.json"],
        400,
    );
    assert_eq!(
        verdict(
            &f,
            &facts(RunKind::Export, RunStatus::Running),
            NOW,
            DAY,
            true
        ),
        Verdict::Keep(Keep::Running)
    );
    assert_eq!(
        verdict(
            &f,
            &facts(RunKind::Export, RunStatus::AwaitingApproval),
            NOW,
            DAY,
            true
        ),
        Verdict::Keep(Keep::AwaitingApproval)
    );
    let unknown = RunStatus::Unknown {
        why: UnknownWhy::Local(Unseen::NoLock {
            host: "another host".into(),
            pid: 1,
        }),
    };
    assert!(matches!(
        verdict(&f, &facts(RunKind::Export, unknown), NOW, DAY, true),
        Verdict::Keep(Keep::Unknown { .. })
    ));
}

#[test]
fn an_export_that_took_its_locks_and_did_not_migrate_is_kept_unless_include_resumable() {
    let f = folder(
        "export-A-1",
        &["run.json", "plan.json", "progress.json", "report.json"],
        40,
    );
    for status in [
        ended("failed"),
        ended("refused"),
        RunStatus::Interrupted {
            why: Interruption::ProcessGone {
                pid: 7,
                host: "h".into(),
            },
        },
        RunStatus::Ended { outcome: None },
    ] {
        let v = verdict(&f, &facts(RunKind::Export, status.clone()), NOW, DAY, false);
        assert!(
            matches!(v, Verdict::Keep(Keep::Resumable { .. })),
            "{status:?}: {v:?}"
        );
        assert_eq!(
            verdict(&f, &facts(RunKind::Export, status), NOW, DAY, true),
            Verdict::Delete
        );
    }
    assert_eq!(
        verdict(
            &f,
            &facts(RunKind::Export, ended("migrated")),
            NOW,
            DAY,
            false
        ),
        Verdict::Delete
    );
}

#[test]
fn an_export_without_progress_or_a_plan_run_is_not_resumable() {
    // It never took its locks: the resume refuses it, so nothing needs its folder.
    let f = folder("export-A-1", &["run.json", "plan.json", "report.json"], 40);
    assert_eq!(
        verdict(
            &f,
            &facts(RunKind::Export, ended("refused")),
            NOW,
            DAY,
            false
        ),
        Verdict::Delete
    );
    let p = folder(
        "export-A-1-plan",
        &["run.json", "plan.json", "progress.json"],
        40,
    );
    let plan = RunFacts {
        plan_only: true,
        ..facts(RunKind::Export, ended("planned"))
    };
    assert_eq!(verdict(&p, &plan, NOW, DAY, false), Verdict::Delete);
}

#[test]
fn a_deployed_run_is_told_by_its_execution_else_by_its_files() {
    assert_eq!(
        RunStatus::of_execution(&"RUNNING".into(), None),
        RunStatus::Running
    );
    assert_eq!(
        RunStatus::of_execution(&"PENDING_REDRIVE".into(), None),
        RunStatus::Running
    );
    assert_eq!(
        RunStatus::of_execution(&"ABORTED".into(), None),
        RunStatus::Ended { outcome: None }
    );
    assert_eq!(
        RunStatus::of_execution(&"SUCCEEDED".into(), Some(&Outcome::Migrated)),
        ended("migrated")
    );
    assert!(matches!(
        RunStatus::of_execution(&"NEW".into(), None),
        RunStatus::Unknown { .. }
    ));
    let files = |f: &[&str]| folder("export-A-1", f, 40).files;
    assert_eq!(
        RunStatus::of_files(
            &files(&["report.json"]),
            Some(&Outcome::Migrated),
            false,
            PlanRun::Absent
        ),
        ended("migrated")
    );
    assert_eq!(
        RunStatus::of_files(
            &files(&["plan.json", "approval.json"]),
            None,
            true,
            PlanRun::Absent
        ),
        RunStatus::AwaitingApproval
    );
    assert_eq!(
        RunStatus::of_files(&files(&["templates/A.json"]), None, false, PlanRun::Ended),
        RunStatus::NeverStarted
    );
    assert!(matches!(
        RunStatus::of_files(&files(&["templates/A.json"]), None, false, PlanRun::Absent),
        RunStatus::Unknown { .. }
    ));
    assert!(matches!(
        RunStatus::of_files(&files(&["progress.json"]), None, false, PlanRun::Ended),
        RunStatus::Unknown { .. }
    ));
    // A local cleanup with notifications leaves only its digest's marker: it ended.
    let cleanup = folder("cleanup-preview-1", &["notified-cleanup-finished.json"], 40);
    assert_eq!(
        RunStatus::of_files(&cleanup.files, None, false, PlanRun::Absent),
        RunStatus::Ended { outcome: None }
    );
    // The approval message's marker says nothing of an end.
    assert!(matches!(
        RunStatus::of_files(
            &files(&["notified-approval-waiting.json"]),
            None,
            false,
            PlanRun::Absent
        ),
        RunStatus::Unknown { .. }
    ));
    // Only uploads while the export's CLI (its plan run's process) lives: it may be
    // asking the user to confirm.
    assert_eq!(
        RunStatus::of_files(
            &files(&["templates/A.json"]),
            None,
            false,
            PlanRun::ProcessAlive
        ),
        RunStatus::Running
    );
}

#[test]
fn a_local_runs_state_maps_onto_prunes_status() {
    assert_eq!(
        RunStatus::of_local(&LocalState::Running),
        RunStatus::Running
    );
    assert_eq!(
        RunStatus::of_local(&LocalState::Ended {
            outcome: "destroyed".into()
        }),
        ended("destroyed")
    );
    assert!(matches!(
        RunStatus::of_local(&LocalState::Unknown {
            why: Unseen::Recorded("x".into())
        }),
        RunStatus::Unknown { .. }
    ));
}

#[test]
fn run_ids_name_their_kind() {
    assert_eq!(kind_of_id("export-App-1"), Some(RunKind::Export));
    assert_eq!(kind_of_id("resume-App-2"), Some(RunKind::Export));
    assert_eq!(kind_of_id("destroy-App-1"), Some(RunKind::Destroy));
    assert_eq!(kind_of_id("cleanup-p-1"), Some(RunKind::Cleanup));
    assert_eq!(kind_of_id("mine"), None);
}

#[test]
fn deletes_go_in_batches_of_at_most_a_thousand_keys() {
    let files: Vec<String> = (0..2500).map(|i| format!("cr/{i}.json")).collect();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let big = folder("destroy-A-1", &refs, 40);
    let small = folder("destroy-B-1", &["run.json"], 40);
    let b = delete_batches([&big, &small]);
    assert_eq!(
        b.iter().map(Vec::len).collect::<Vec<_>>(),
        vec![1000, 1000, 501]
    );
    assert!(delete_batches(std::iter::empty()).is_empty());
}

#[test]
fn a_runs_kind_is_its_machines_else_its_files_else_its_ids() {
    let none = KindWitness::default();
    // A run named by --run-id names no kind: what answered for it, or its files, do.
    assert_eq!(kind_of_run("orders-q1", &none), None);
    let machine = KindWitness {
        machine: Some(&RunKind::Export),
        ..none
    };
    assert_eq!(kind_of_run("orders-q1", &machine), Some(RunKind::Export));
    // The machine that answered outranks the id's first word.
    assert_eq!(
        kind_of_run("destroy-like-1", &machine),
        Some(RunKind::Export)
    );
    let plan = KindWitness { plan: true, ..none };
    assert_eq!(kind_of_run("orders-q1", &plan), Some(RunKind::Export));
    let report = KindWitness {
        report: Some("export"),
        ..none
    };
    assert_eq!(kind_of_run("orders-q1", &report), Some(RunKind::Export));
    let local = KindWitness {
        run_json: Some("destroy"),
        ..none
    };
    assert_eq!(kind_of_run("orders-q1", &local), Some(RunKind::Destroy));
    let odd = KindWitness {
        report: Some("something"),
        ..none
    };
    assert_eq!(kind_of_run("cleanup-p-1", &odd), Some(RunKind::Cleanup));
}

fn lock(owner: &str, expires_ms: i64) -> cdkd_core::lock::LockInfo {
    let body =
        serde_json::json!({"owner": owner, "timestamp": NOW - 60_000, "expiresAt": expires_ms});
    cdkd_core::lock::parse_lock(body.to_string().as_bytes())
        .unwrap()
        .unwrap()
}

#[test]
fn the_root_locks_holder_is_the_run_an_execution_or_nobody() {
    let fresh = NOW + 60_000;
    let h = |owner: &str, exp: i64| root_holder(Some(&lock(owner, exp)), "export-A-1", NOW);
    assert_eq!(root_holder(None, "export-A-1", NOW), RootHolder::Nobody);
    assert_eq!(h("cdkd-flow:export-A-1", fresh), RootHolder::ThisRun);
    assert_eq!(
        h("cdkd-flow:export-A-1@laptop:42", fresh),
        RootHolder::ThisRun
    );
    assert_eq!(
        h("cdkd-flow:resume-A-2", fresh),
        RootHolder::Execution("resume-A-2".into())
    );
    // Expired: its holder stopped renewing it.
    assert_eq!(h("cdkd-flow:export-A-1", NOW), RootHolder::Nobody);
    assert_eq!(h("cdkd-flow:resume-A-2", NOW - 1), RootHolder::Nobody);
    // Another local run, cdkd, a prefix of the id: not this run's.
    assert_eq!(
        h("cdkd-flow:export-B-1@laptop:42", fresh),
        RootHolder::Nobody
    );
    assert_eq!(h("alice@laptop:42", fresh), RootHolder::Nobody);
    assert_eq!(
        h("cdkd-flow:export-A-10", fresh),
        RootHolder::Execution("export-A-10".into())
    );
}

#[test]
fn a_resume_holding_the_root_lock_keeps_an_ended_export_running() {
    let failed = || RunStatus::Ended { outcome: None };
    let f = folder("export-A-1", &["plan.json", "progress.json"], 40);
    let resume = RootHolder::Execution("resume-A-2".into());
    let described = |status: &str, into: &str| HolderExecution::Described {
        status: status.into(),
        writes_into: into.into(),
    };
    // The resume runs in this folder: kept as running, even under --include-resumable.
    let running = with_root_lock(
        failed(),
        "export-A-1",
        &resume,
        Some(&described("RUNNING", "export-A-1")),
    );
    assert_eq!(running, RunStatus::Running);
    assert_eq!(
        verdict(&f, &facts(RunKind::Export, running), NOW, DAY, true),
        Verdict::Keep(Keep::Running)
    );
    // The run's own fresh lock (an interrupted local run too).
    assert_eq!(
        with_root_lock(
            RunStatus::Interrupted {
                why: Interruption::CtrlC
            },
            "export-A-1",
            &RootHolder::ThisRun,
            None
        ),
        RunStatus::Running
    );
    // A resume of another run, or one that ended: the run's own status stands.
    for (status, into) in [("RUNNING", "export-B-1"), ("FAILED", "export-A-1")] {
        assert_eq!(
            with_root_lock(
                failed(),
                "export-A-1",
                &resume,
                Some(&described(status, into))
            ),
            failed()
        );
    }
    assert_eq!(
        with_root_lock(failed(), "export-A-1", &RootHolder::Nobody, None),
        failed()
    );
    // A holder that cannot be described may be resuming it: unknown, kept.
    let unknown = with_root_lock(
        failed(),
        "export-A-1",
        &resume,
        Some(&HolderExecution::Undescribed),
    );
    assert!(
        matches!(&unknown, RunStatus::Unknown { why } if why.to_string().contains("resume-A-2")),
        "{unknown:?}"
    );
    assert!(matches!(
        verdict(&f, &facts(RunKind::Export, unknown), NOW, DAY, true),
        Verdict::Keep(Keep::Unknown { .. })
    ));
}

#[test]
fn only_an_ended_or_interrupted_export_that_took_its_locks_reads_its_root_lock() {
    let f = folder("export-A-1", &["plan.json", "progress.json"], 40);
    let ended = RunStatus::Ended { outcome: None };
    assert!(needs_root_lock(&f, &facts(RunKind::Export, ended.clone())));
    assert!(needs_root_lock(
        &f,
        &facts(
            RunKind::Export,
            RunStatus::Interrupted {
                why: Interruption::CtrlC
            }
        )
    ));
    assert!(!needs_root_lock(
        &f,
        &facts(RunKind::Export, RunStatus::Running)
    ));
    assert!(!needs_root_lock(
        &f,
        &facts(RunKind::Destroy, ended.clone())
    ));
    let plan = RunFacts {
        plan_only: true,
        ..facts(RunKind::Export, ended.clone())
    };
    assert!(!needs_root_lock(&f, &plan));
    let no_progress = folder("export-A-1", &["plan.json"], 40);
    assert!(!needs_root_lock(
        &no_progress,
        &facts(RunKind::Export, ended)
    ));
}

#[test]
fn a_folder_with_keys_s3_refused_is_partly_deleted() {
    let f = folder("destroy-A-1", &["run.json", "report.json", "cr/X.json"], 40);
    let none = std::collections::BTreeSet::new();
    assert_eq!(keys_left(&f, &none), 0);
    let refused: std::collections::BTreeSet<&str> = [
        "cdkd/_runs/destroy-A-1/report.json",
        "cdkd/_runs/destroy-B-1/report.json",
    ]
    .into_iter()
    .collect();
    assert_eq!(keys_left(&f, &refused), 1);
}

#[test]
fn an_older_than_under_a_day_is_accepted_with_a_warning() {
    let w = older_than_warning("1s", parse_older_than("1s").unwrap())
        .unwrap()
        .to_string();
    assert!(w.starts_with("--older-than 1s is under a day"), "{w}");
    assert!(older_than_warning("23h59m", parse_older_than("23h").unwrap()).is_some());
    assert_eq!(
        older_than_warning("1d", parse_older_than("1d").unwrap()),
        None
    );
    assert_eq!(
        older_than_warning("30d", parse_older_than("30d").unwrap()),
        None
    );
}

#[test]
fn a_sooner_rule_is_named_through_an_and_filter_and_under_the_run_prefix() {
    let want = runs_rule("cdkd", 90).unwrap();
    // An `And` filter (a prefix and a size): no plain prefix, a scope.
    let and = |id: &str, scope: &str, sized: bool| ObservedRule {
        id: Some(id.into()),
        enabled: true,
        prefix: None,
        scope: Some(scope.into()),
        sized,
        expiration_days: Some(7),
        other_parts: true,
        ..ObservedRule::default()
    };
    let w: Vec<String> = sooner_rules(
        &[
            and("and-state", "cdkd/", false),
            and("and-big", "cdkd/_runs/", true),
            // Inside the run prefix: some run folders.
            and("exports-only", "cdkd/_runs/export-", false),
            // Elsewhere, or by tags (run objects carry none): never.
            and("and-logs", "logs/", false),
            ObservedRule {
                scope: None,
                ..and("tagged", "", false)
            },
            // Not sooner.
            ObservedRule {
                expiration_days: Some(90),
                ..and("same", "cdkd/_runs/", false)
            },
            // Disabled.
            ObservedRule {
                enabled: false,
                ..and("off", "", false)
            },
        ],
        &want,
    )
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(w.len(), 3, "{w:?}");
    assert!(
        w[0].contains("'and-state'") && w[0].ends_with("run folders go by the shorter one"),
        "{}",
        w[0]
    );
    assert!(
        w[1].contains("'and-big'") && w[1].contains("the run objects of the sizes it selects"),
        "{}",
        w[1]
    );
    assert!(
        w[2].contains("'exports-only'")
            && w[2].contains("under 'cdkd/_runs/export-'")
            && w[2].ends_with("the run folders under it go by the shorter one"),
        "{}",
        w[2]
    );
}
