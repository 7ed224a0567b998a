//! The words of the refusals the CLI's own commands return as data (`core::view::command`),
//! every variant with representative values, a hostile one (newline, control character,
//! leading '-') wherever an untrusted value is printed, as one insta snapshot.

use cdkd_core::contention::{ContentionContext, Subject};
use cdkd_core::destroy_command::DestroyCommandRefusal;
use cdkd_core::export::command::ExportCommandRefusal;
use cdkd_core::export::held::ExportHold;
use cdkd_core::export::names::NameRefusal;
use cdkd_core::export::plan::PlanRefusal;
use cdkd_core::lock::LockInfo;
use cdkd_core::repair::orphan_command::OrphanCommandRefusal;
use cdkd_core::repair::rewrite::{rewrite, LiveReads, RefValues};
use cdkd_core::run::{ExecutionStatus, RunId, RunKind};
use cdkd_core::runs_refusal::{
    ApprovalRefusal, ArtifactRefusal, NoRequestWhy, RunEndRefusal, RunsRefusal,
};
use cdkd_core::state_refusal::StateRefusal;
use cdkd_core::workflow_refusal::{BackendRefusal, NoMachineWhy, WorkflowFile, WorkflowRefusal};
use serde_json::json;

/// A hostile value: a newline, an escape sequence, a leading '-'.
const HOSTILE: &str = "-evil\n\u{1b}[2Jname";

fn run() -> RunId {
    RunId::from("run-1")
}

fn hostile_run() -> RunId {
    RunId::from(HOSTILE)
}

fn runs_refusals() -> Vec<RunsRefusal> {
    vec![
        RunsRefusal::NoRunNamed {
            run: HOSTILE.into(),
            under: vec![
                "arn:aws:states:us-east-1:123456789012:stateMachine:a".into(),
                HOSTILE.into(),
            ],
        },
        RunsRefusal::NoBackendNorLocal {
            backend: "no destroy state machine".into(),
            local: "access denied".into(),
        },
        RunsRefusal::NoBackendNorBucket {
            backend: "no destroy state machine".into(),
            error: "access denied".into(),
        },
        RunsRefusal::NoRunInFolder {
            run: hostile_run(),
            bucket: HOSTILE.into(),
            prefix: "cdkd".into(),
            backend: "no backend".into(),
        },
        RunsRefusal::NoLocalRun {
            run: hostile_run(),
            bucket: "bucket".into(),
            prefix: HOSTILE.into(),
        },
        RunsRefusal::NoStateBucket { run: hostile_run() },
        RunsRefusal::StopFailed {
            run: run(),
            error: "progress.json is not a JSON object".into(),
        },
        RunsRefusal::NoProgressYet { run: run() },
        RunsRefusal::ProgressKeptChanging,
        RunsRefusal::ProgressNotJson {
            error: "expected value at line 1 column 1".into(),
        },
        RunsRefusal::ProgressNotObject,
        RunsRefusal::ProgressUnwritable {
            error: "key must be a string".into(),
        },
        RunsRefusal::NotExport { run: run() },
        RunsRefusal::AlreadyEnded {
            run: run(),
            status: ExecutionStatus::Failed,
            error: Some("LockHeld".into()),
            cause: Some(HOSTILE.into()),
            verb: "approve".into(),
        },
        RunsRefusal::AlreadyEnded {
            run: run(),
            status: ExecutionStatus::Succeeded,
            error: None,
            cause: None,
            verb: "reject".into(),
        },
        RunsRefusal::NoDecision { run: run() },
    ]
}

fn approval_refusals() -> Vec<ApprovalRefusal> {
    let at = |why| ApprovalRefusal::NoRequest {
        run: run(),
        bucket: "bucket".into(),
        key: "cdkd/_runs/run-1/approval.json".into(),
        why,
    };
    vec![
        ApprovalRefusal::NotARequest {
            run: hostile_run(),
            bucket: HOSTILE.into(),
            key: "cdkd/_runs/run-1/approval.json".into(),
            error: "missing field `token`".into(),
        },
        at(NoRequestWhy::NoLocalExport),
        at(NoRequestWhy::StillPlanning),
        at(NoRequestWhy::NotRequested),
        ApprovalRefusal::Unserializable {
            key: "cdkd/_runs/run-1/approval.json".into(),
            error: "key must be a string".into(),
        },
        ApprovalRefusal::KeptChanging {
            run: run(),
            bucket: "bucket".into(),
            key: HOSTILE.into(),
        },
    ]
}

fn artifact_and_end_refusals() -> Vec<String> {
    vec![
        ArtifactRefusal::Unreadable {
            what: "report".into(),
            bucket: HOSTILE.into(),
            key: "cdkd/_runs/run-1/report.json".into(),
            error: "EOF while parsing".into(),
        }
        .to_string(),
        ArtifactRefusal::Cache {
            message: "the plan cannot be read: timeout".into(),
        }
        .to_string(),
        RunEndRefusal::Interrupted {
            run: hostile_run(),
            kind: RunKind::Destroy,
            resume: None,
        }
        .to_string(),
        RunEndRefusal::Interrupted {
            run: run(),
            kind: RunKind::Destroy,
            resume: Some("cdkd-flow destroy App --local --run-id run-1".into()),
        }
        .to_string(),
        RunEndRefusal::Interrupted {
            run: run(),
            kind: RunKind::Export,
            resume: Some("cdkd-flow export App --resume run-1 --local".into()),
        }
        .to_string(),
        RunEndRefusal::Stopped {
            error: "the engine panicked".into(),
        }
        .to_string(),
        RunEndRefusal::CleanupFailed {
            error: "States.TaskFailed".into(),
            cause: HOSTILE.into(),
        }
        .to_string(),
    ]
}

fn workflow_refusals() -> Vec<String> {
    vec![
        BackendRefusal::NoStateMachine {
            kind: RunKind::Cleanup,
            env_var: "CDKD_FLOW_CLEANUP_STATE_MACHINE_ARN".into(),
            why: NoMachineWhy::NoOutput {
                stack: HOSTILE.into(),
                output_key: "CleanupStateMachineArn".into(),
            },
        }
        .to_string(),
        BackendRefusal::NoStateMachine {
            kind: RunKind::Export,
            env_var: "CDKD_FLOW_EXPORT_STATE_MACHINE_ARN".into(),
            why: NoMachineWhy::Error("the backend stack 'cdkd-flow' does not exist".into()),
        }
        .to_string(),
        BackendRefusal::NotAStateMachineArn {
            arn: HOSTILE.into(),
        }
        .to_string(),
        WorkflowRefusal::DefinitionDoesNotLoad {
            name: "cdkd-flow-destroy".into(),
            error: "unknown state Foo".into(),
        }
        .to_string(),
        WorkflowRefusal::Unreadable {
            what: WorkflowFile::Definition,
            path: "sm.json".into(),
            error: "No such file or directory (os error 2)".into(),
        }
        .to_string(),
        WorkflowRefusal::Unreadable {
            what: WorkflowFile::Input,
            path: "input.json".into(),
            error: "No such file or directory (os error 2)".into(),
        }
        .to_string(),
        WorkflowRefusal::DoesNotLoad {
            file: "sm.json".into(),
            error: "missing substitution ${Child}".into(),
            missing: Some("Child".into()),
        }
        .to_string(),
        WorkflowRefusal::DoesNotLoad {
            file: "sm.json".into(),
            error: "not JSON".into(),
            missing: None,
        }
        .to_string(),
    ]
}

fn state_destroy_export_refusals() -> Vec<String> {
    vec![
        StateRefusal::NoRecord {
            stack: HOSTILE.into(),
            region: "us-east-1".into(),
            bucket: "bucket".into(),
            prefix: "cdkd".into(),
        }
        .to_string(),
        StateRefusal::MissingNestedChild {
            parent: "App".into(),
            logical_id: HOSTILE.into(),
            child: "App~Child".into(),
            region: "us-east-1".into(),
        }
        .to_string(),
        DestroyCommandRefusal::Refused {
            refused: 1,
            runs: 2,
        }
        .to_string(),
        DestroyCommandRefusal::NotConfirmed.to_string(),
        ExportCommandRefusal::Failed {
            stack: HOSTILE.into(),
            error: "Refused".into(),
            cause: "a CloudFormation stack named App exists\n(CREATE_COMPLETE)".into(),
        }
        .to_string(),
        ExportCommandRefusal::Failed {
            stack: "App".into(),
            error: "Transient\u{7}".into(),
            cause: "timeout".into(),
        }
        .to_string(),
        ExportCommandRefusal::NoPlan {
            stack: HOSTILE.into(),
            plan_run: RunId::from("run-1-plan"),
        }
        .to_string(),
        ExportCommandRefusal::Reuse {
            stack: "App".into(),
            why: PlanRefusal::Name(NameRefusal::Twice {
                stack: "Child".into(),
            }),
        }
        .to_string(),
    ]
}

fn orphan_refusals() -> Vec<String> {
    let ctx = ContentionContext {
        subject: Subject::Stack,
        stack: HOSTILE,
        region: Some("us-east-1"),
        profile: None,
        bucket: Some("bucket"),
        prefix: "cdkd",
    };
    let was = LockInfo {
        owner: "alice@laptop".into(),
        operation: Some("deploy".into()),
        timestamp: None,
        expires_at: None,
        raw: serde_json::Map::new(),
        written_ms: None,
    };
    let r = json!({"resources": {
        "Gone": {"resourceType": "Custom::Thing"},
        "Keeper": {"resourceType": "T", "properties": {"A": {"Ref": "Gone"}}}
    }});
    let aborted = rewrite(
        r.as_object().unwrap(),
        &["Gone".to_string()],
        &LiveReads::new(),
        &RefValues::new(),
        false,
    )
    .unwrap_err();
    let hold = ExportHold {
        record: HOSTILE.into(),
        region: "us-east-1".into(),
        cfn_stack: "App".into(),
        status: "IMPORT_COMPLETE".into(),
        run_id: run(),
        migrated: false,
    };
    let refusals = vec![
        OrphanCommandRefusal::Held {
            message: "stack App is locked by alice@laptop".into(),
        },
        OrphanCommandRefusal::LockMalformed {
            ctx,
            detail: "invalid JSON".into(),
            force_removes: true,
        },
        OrphanCommandRefusal::LockMalformed {
            ctx,
            detail: "a JSON array".into(),
            force_removes: false,
        },
        OrphanCommandRefusal::LockChanged {
            ctx,
            was: Some(Box::new(was)),
        },
        OrphanCommandRefusal::LockChanged { ctx, was: None },
        OrphanCommandRefusal::HeldByExport {
            hold,
            flags: Some("--state-bucket bucket".into()),
        },
        OrphanCommandRefusal::HoldUnknown {
            error: "cannot describe stack App: throttled".into(),
        },
        OrphanCommandRefusal::ChildRecord {
            child: HOSTILE.into(),
            child_region: Some("us-east-1".into()),
            bucket: "bucket".into(),
            prefix: "cdkd".into(),
        },
        OrphanCommandRefusal::Aborted(aborted),
    ];
    refusals.iter().map(ToString::to_string).collect()
}

#[test]
fn the_words_of_every_cli_refusal() {
    let mut lines: Vec<String> = Vec::new();
    lines.extend(runs_refusals().iter().map(ToString::to_string));
    lines.extend(approval_refusals().iter().map(ToString::to_string));
    lines.extend(artifact_and_end_refusals());
    lines.extend(workflow_refusals());
    lines.extend(state_destroy_export_refusals());
    lines.extend(orphan_refusals());
    // Each as its `error:` line would show it, and escaped, so the snapshot shows what
    // the value itself carries.
    let text: Vec<String> = lines
        .iter()
        .map(|l| format!("{}\n  {:?}", cdkd_core::view::error_line(l), l))
        .collect();
    insta::assert_snapshot!(text.join("\n"));
}

/// Every usage error's words, with hostile values where one is printed.
#[test]
fn the_words_of_every_usage_error() {
    use cdkd_core::export::approval::ReasonTooLong;
    use cdkd_core::usage::{NoTerminalFor, Usage};
    let h = || "x\ny".to_string();
    let lines: Vec<String> = [
        Usage::NoTerminal(NoTerminalFor::RefreshObserved),
        Usage::NoTerminal(NoTerminalFor::OrphanResources),
        Usage::NoTerminal(NoTerminalFor::OrphanStacks),
        Usage::NoTerminal(NoTerminalFor::Destroy),
        Usage::NoTerminal(NoTerminalFor::Export {
            stack: "App".into(),
        }),
        Usage::NoTerminal(NoTerminalFor::ExportResume {
            stack: "App".into(),
            run_id: "export-App-1".into(),
        }),
        Usage::AnswerUnread {
            error: "broken pipe".into(),
        },
        Usage::ForceUnlockNeedsStack,
        Usage::NotAnExecutionArn { given: h() },
        Usage::NotARunId {
            given: h(),
            why: cdkd_core::run::InvalidRunId,
        },
        Usage::NoGracefulStop {
            run: "export-App-1".into(),
        },
        Usage::ReasonTooLong {
            verb: "reject",
            why: ReasonTooLong { chars: 1001 },
        },
        Usage::TemplateNeedsStack,
        Usage::NoStateBucket,
        Usage::NotNameValue {
            flag: "--param".into(),
            given: "novalue".into(),
        },
        Usage::BadTimeScale,
        Usage::NotJson {
            what: "--input".into(),
            error: "expected value at line 1 column 1".into(),
        },
        Usage::EmptyStackRegion,
        Usage::RunIdOfSeveral,
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// Every line the `export` command tells as it goes and its two questions, with hostile
/// names (a newline, a control character) where one is printed.
#[test]
fn the_words_of_every_export_note() {
    use cdkd_core::export::command::ExportNote;
    let h = "App\n\u{7}X";
    let r = &RunId::from("export-App-1");
    let plan = RunId::from("plan-App-1");
    let ids = ["Child".to_string(), "Other\nId".to_string()];
    let hits = [cdkd_core::export::consumers::ConsumerHit {
        consumer: "Shop\nX".into(),
        output: "TableName".into(),
        path: "Resources.Fn.Properties.Env[0]".into(),
    }];
    let Some(Ok(reads)) = cdkd_core::export::consumers::verdict("App", &hits, false) else {
        panic!("a hit warns");
    };
    let deep = cdkd_core::export::refusal::ExportRefusal::NestedTooDeep {
        stack: "App".into(),
        nested: "App~Child".into(),
    };
    let lines: Vec<String> = [
        ExportNote::Uploaded {
            stack: h,
            run_id: r,
            templates: 3,
            bucket: "b\nx",
            run_folder: "cdkd/_runs/export-App-1",
        },
        ExportNote::NestedWithoutTemplate {
            stack: h,
            logical_ids: &ids,
        },
        ExportNote::Planning { stack: h },
        ExportNote::WaitingForPlan {
            stack: h,
            plan_run: &plan,
        },
        ExportNote::Migrating {
            stack: h,
            run_id: r,
        },
        ExportNote::NothingToMigrate { stack: h },
        ExportNote::Cancelled { stack: h },
        ExportNote::EndedLockReleased {
            stack: h,
            lock_stack: "App~Child\n",
            owner: "cdkd-flow:export-App-0@laptop:3",
        },
        ExportNote::EndedLockKept {
            stack: h,
            lock_stack: "App~Child",
            error: "AccessDenied",
        },
        ExportNote::AlreadyMigrated {
            stack: h,
            run_id: r,
            cfn: "App-cfn\n",
        },
        ExportNote::Interrupted {
            stack: h,
            run_id: r,
            last_step: Some("import App\nx"),
            cfn: "App",
        },
        ExportNote::Interrupted {
            stack: "App",
            run_id: r,
            last_step: None,
            cfn: "App",
        },
        ExportNote::DryRunOfInterrupted {
            stack: h,
            run_id: r,
        },
        ExportNote::NotResumed {
            stack: h,
            run_id: r,
        },
        ExportNote::Resuming {
            stack: h,
            run_id: r,
        },
        ExportNote::CrossStack {
            reads: &reads,
            strict: true,
        },
        ExportNote::CrossStack {
            reads: &reads,
            strict: false,
        },
        ExportNote::WouldBeRefused { why: &deep },
        ExportNote::AskMigrate { stack: h },
        ExportNote::AskResume {
            stack: h,
            run_id: r,
        },
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// Every line the `runs` commands tell as they go, with hostile values where one is
/// printed from outside (a status, a backend stack, a decider, an unseen host).
#[test]
fn the_words_of_every_runs_note() {
    use cdkd_core::export::approval::{Approval, Decision, PlanSummary};
    use cdkd_core::runs::Unseen;
    use cdkd_core::runs_note::RunsNote;
    let request = |approved: bool| Approval {
        stack: "App".into(),
        run_id: RunId::from("export-App-1"),
        token: "t".into(),
        requested_ms: 1_795_965_752_000,
        plan_key: "cdkd/_runs/export-App-1/plan.json".into(),
        summary: PlanSummary::default(),
        decision: Some(Decision {
            approved,
            by: "alice@lap\ntop".into(),
            at_ms: 1_795_965_812_000,
            reason: Some("looks\nright".into()),
        }),
    };
    let (yes, no) = (request(true), request(false));
    let unseen = Unseen::NoLock {
        host: "other\nhost".into(),
        pid: 42,
    };
    let run = RunId::from("destroy-App-1");
    let lines: Vec<String> = [
        RunsNote::FoldersUnread {
            error: "AccessDenied",
        },
        RunsNote::ListingWithoutBackend {
            backend: "no stack cdkd-flow",
        },
        RunsNote::LocalNotListed { error: "timeout" },
        RunsNote::AlreadyEnded {
            run: "destroy-App-1",
            status: "SUCC\nEEDED",
        },
        RunsNote::StoppedNow {
            run: "destroy-App-1",
        },
        RunsNote::StopAlreadyRequested {
            run: "destroy-App-1",
        },
        RunsNote::StopRequested {
            run: "destroy-App-1",
        },
        RunsNote::LocalDecided {
            decided: &yes,
            unseen: None,
        },
        RunsNote::LocalDecided {
            decided: &no,
            unseen: Some(&unseen),
        },
        RunsNote::Decided {
            run: "export-App-1",
            decided: &yes,
        },
        RunsNote::Decided {
            run: "export-App-1",
            decided: &no,
        },
        RunsNote::NotTold {
            run: "export-App-1",
            decided: &no,
            error: "TaskTimedOut",
        },
        RunsNote::Listed { objects: 10_000 },
        RunsNote::Deleted {
            done: 1000,
            total: 2500,
        },
        RunsNote::NoStateMachine {
            backend_stack: "cdkd\nflow",
        },
        RunsNote::ShowingFolder {
            backend: "no stack cdkd-flow",
            run: &run,
        },
        RunsNote::NoReportYet { run: &run },
    ]
    .iter()
    .map(ToString::to_string)
    .collect();
    insta::assert_snapshot!(lines.join("\n"));
}

/// A run started on the backend (or found started), how to follow it, a cleanup's
/// unreadable lists, a workflow execution that failed, and a destroy run starting.
#[test]
fn the_words_of_the_run_start_and_failure_notes() {
    use cdkd_core::destroy_command::{DestroyNote, DestroyStop};
    use cdkd_core::runs_note::RunsNote;
    let left = ["B".to_string(), "C\nD".to_string()];
    let arn = "arn:aws:states:us-east-1:123456789012:execution:cdkd-flow-destroy:destroy-App-1";
    let run = RunId::from("destroy-App-1");
    let lines = [
        RunsNote::Started {
            kind: RunKind::Destroy,
            run: "destroy-App-1",
            reattached: false,
            execution_arn: arn,
        }
        .to_string(),
        RunsNote::Started {
            kind: RunKind::Export,
            run: "export-App-1",
            reattached: true,
            execution_arn: "arn:x\ny",
        }
        .to_string(),
        RunsNote::WatchWith {
            run: "destroy-App-1",
        }
        .to_string(),
        RunsNote::ListsUnreadable {
            bucket: "b\nx",
            run_folder: "cdkd/_runs/cleanup-1",
            error: "Access\nDenied",
        }
        .to_string(),
        WorkflowRefusal::ExecutionFailed {
            error: "States.TaskFailed".into(),
            cause: "boom".into(),
        }
        .to_string(),
        DestroyNote::Started {
            stack: "App\nX",
            run_id: &run,
        }
        .to_string(),
        DestroyNote::Partial { stack: "App\nX" }.to_string(),
        DestroyNote::Stopped {
            why: Some(&DestroyStop::Said("interrupted (Ctrl-C)".into())),
            not_started: &left,
        }
        .to_string(),
        DestroyNote::Stopped {
            why: Some(&DestroyStop::StepStopped {
                stack: "App\nX".into(),
                error: "LockLost".into(),
                cause: "the lock was taken over".into(),
            }),
            not_started: &[],
        }
        .to_string(),
        DestroyNote::Stopped {
            why: Some(&DestroyStop::Failed {
                error: "Refused".into(),
                cause: "held".into(),
            }),
            not_started: &[],
        }
        .to_string(),
        DestroyNote::Stopped {
            why: Some(&DestroyStop::NoReport),
            not_started: &left,
        }
        .to_string(),
        DestroyNote::Stopped {
            why: None,
            not_started: &left,
        }
        .to_string(),
        RunsNote::CtrlCStop { run: &run }.to_string(),
        RunsNote::ConnectionLost {
            error: "dispatch failure",
            what: "DescribeExecution",
        }
        .to_string(),
        RunsNote::ContinuesIn {
            execution: "arn:next\nx",
        }
        .to_string(),
    ];
    insta::assert_snapshot!(lines.join("\n"));
}

/// What `force-unlock` says of each lock, with a hostile stack name and holder, and
/// whether each counts as released.
#[test]
fn the_words_of_every_force_unlock_line() {
    use cdkd_core::force_unlock::{
        ForceOutcome, ForceUnlockError, ForceUnlockFailures, ForceUnlockLine, Target,
    };
    let lock = |v: serde_json::Value| {
        cdkd_core::lock::parse_lock(v.to_string().as_bytes())
            .unwrap()
            .unwrap()
    };
    let bob = lock(
        json!({"owner": "bob@h\nx:1", "operation": "deploy", "expiresAt": 1_767_225_900_000i64}),
    );
    let run = lock(json!({"owner": "cdkd-flow:export-App-1@laptop:41", "operation": "export"}));
    let region = Target::Region("us-east-1".into());
    let outcomes = [
        ForceOutcome::Held(&bob),
        ForceOutcome::Unreadable,
        ForceOutcome::Absent,
        ForceOutcome::Vanished(Some(&bob)),
        ForceOutcome::Vanished(None),
        ForceOutcome::Changed(Some(&bob)),
        ForceOutcome::Changed(None),
        ForceOutcome::ExportRun(&run),
        ForceOutcome::OtherHolder(Some(&bob)),
        ForceOutcome::OtherHolder(None),
        ForceOutcome::Live(&bob),
    ];
    let mut lines: Vec<String> = outcomes
        .iter()
        .map(|o| {
            let l = ForceUnlockLine {
                stack: "My\nStack",
                target: &region,
                outcome: *o,
                now_ms: 1_767_225_600_000,
            };
            format!("[released: {}] {l}", l.outcome.released())
        })
        .collect();
    lines.push(
        ForceUnlockError {
            stack: "App",
            target: &Target::Legacy,
            error: "Access\nDenied",
        }
        .to_string(),
    );
    lines.push(ForceUnlockFailures(&["a: x".into(), "b: y".into()]).to_string());
    insta::assert_snapshot!(lines.join("\n"));
}
