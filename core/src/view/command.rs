//! The words of the refusals the CLI's own commands return as data: `runs` and the
//! approval gate (`runs_refusal`), starting a workflow (`workflow_refusal`), a missing
//! record (`state_refusal`), `destroy` (`destroy_command`), `export`
//! (`export::command`) and `state orphan` (`repair::orphan_command`). Untrusted values
//! are flattened as they always were (docs/state-views.md, "Flatten (diagnostics)");
//! what another error said is printed as it said it.

use std::fmt;

use crate::destroy_command::{DestroyCommandRefusal, DestroyNote, DestroyStop};
use crate::export::command::{ExportCommandRefusal, ExportNote};
use crate::repair::orphan_command::OrphanCommandRefusal;
use crate::run::RunKind;
use crate::runs_note::RunsNote;
use crate::runs_refusal::{
    ApprovalRefusal, ArtifactRefusal, NoRequestWhy, RunEndRefusal, RunsRefusal,
};
use crate::state_refusal::StateRefusal;
use crate::text::{flatten_str, or_unrenderable, printable_str};
use crate::usage::{NoTerminalFor, Usage};
use crate::view::refusal::TypedRefusal;
use crate::workflow_refusal::{BackendRefusal, NoMachineWhy, WorkflowFile, WorkflowRefusal};

impl TypedRefusal for RunsRefusal {}
impl TypedRefusal for ApprovalRefusal {}
impl TypedRefusal for ArtifactRefusal {}
impl TypedRefusal for RunEndRefusal {}
impl TypedRefusal for BackendRefusal {}
impl TypedRefusal for WorkflowRefusal {}
impl TypedRefusal for StateRefusal {}
impl TypedRefusal for DestroyCommandRefusal {}
impl TypedRefusal for ExportCommandRefusal {}
impl TypedRefusal for OrphanCommandRefusal<'_> {}
impl TypedRefusal for Usage {}

/// `s3://<bucket>/<key>`, both flattened.
fn s3(bucket: &str, key: &str) -> String {
    format!("s3://{}/{}", flatten_str(bucket), flatten_str(key))
}

/// `s3://<bucket>/<prefix>/_runs/`: where a state bucket keeps its runs' folders.
fn runs_folder(bucket: &str, prefix: &str) -> String {
    s3(bucket, &crate::keys::run_prefix(prefix, ""))
}

impl fmt::Display for RunsRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunsRefusal::NoRunNamed { run, under } => {
                let under: Vec<String> = under.iter().map(|a| flatten_str(a)).collect();
                write!(
                    f,
                    "no run named '{}' under {}",
                    flatten_str(run),
                    under.join(" or ")
                )
            }
            RunsRefusal::NoBackendNorLocal { backend, local } => write!(
                f,
                "{backend}; and the local runs cannot be read either: {local}"
            ),
            RunsRefusal::NoBackendNorBucket { backend, error } => write!(
                f,
                "{backend}; and the state bucket cannot be read either: {error}"
            ),
            RunsRefusal::NoRunInFolder {
                run,
                bucket,
                prefix,
                backend,
            } => write!(
                f,
                "no run named '{run}' in {}: no deployed backend to ask ({backend})",
                runs_folder(bucket, prefix)
            ),
            RunsRefusal::NoLocalRun {
                run,
                bucket,
                prefix,
            } => write!(
                f,
                "no local run named '{run}' in {} (its run.json is missing: was it started with --local, with the same --state-bucket and --state-prefix?)",
                runs_folder(bucket, prefix)
            ),
            RunsRefusal::NoStateBucket { run } => {
                write!(f, "run {run}: its input names no stateBucket")
            }
            RunsRefusal::StopFailed { run, error } => write!(f, "run {run}: {error}"),
            RunsRefusal::NoProgressYet { run } => write!(
                f,
                "run {run} has no progress.json yet (it is still planning): try again in a moment, or stop it at once with --now"
            ),
            RunsRefusal::ProgressKeptChanging => {
                f.write_str("progress.json kept changing (5 conditional writes lost); try again")
            }
            RunsRefusal::ProgressNotJson { error } => {
                write!(f, "progress.json is not JSON: {error}")
            }
            RunsRefusal::ProgressNotObject => f.write_str("progress.json is not a JSON object"),
            RunsRefusal::ProgressUnwritable { error } => f.write_str(error),
            RunsRefusal::NotExport { run } => write!(
                f,
                "run {run} is not an export run: only an export started with --require-approval waits for approval"
            ),
            RunsRefusal::AlreadyEnded {
                run,
                status,
                error,
                cause,
                verb,
            } => {
                let row = crate::view::runs::ExecutionRow {
                    name: run.clone(),
                    arn: String::new(),
                    kind: None,
                    status: status.clone(),
                    start_ms: 0,
                    stop_ms: None,
                    target: None,
                    error: error.clone(),
                    cause: cause.clone(),
                };
                write!(
                    f,
                    "run {run} has already ended: {}; nothing to {verb}",
                    crate::view::runs::status_text(&row)
                )
            }
            RunsRefusal::NoDecision { run } => write!(f, "run {run}: no decision was recorded"),
        }
    }
}

impl NoRequestWhy {
    fn words(self) -> &'static str {
        match self {
            NoRequestWhy::NoLocalExport => "no local export by that run id waits for approval in this state bucket (was it started with --require-approval, and with the same --state-bucket and --state-prefix?)",
            NoRequestWhy::StillPlanning => "the run is still planning; try again in a moment",
            NoRequestWhy::NotRequested => {
                "it was not started with --require-approval, so nothing waits for a decision"
            }
        }
    }
}

impl fmt::Display for ApprovalRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ApprovalRefusal::NotARequest {
                run,
                bucket,
                key,
                error,
            } => write!(
                f,
                "run {run}: {} is not an approval request: {error}",
                s3(bucket, key)
            ),
            ApprovalRefusal::NoRequest {
                run,
                bucket,
                key,
                why,
            } => write!(
                f,
                "run {run} has no approval request ({} does not exist): {}",
                s3(bucket, key),
                why.words()
            ),
            ApprovalRefusal::Unserializable { key, error } => {
                write!(f, "cannot serialize {key}: {error}")
            }
            ApprovalRefusal::KeptChanging { run, bucket, key } => write!(
                f,
                "run {run}: {} kept changing (5 conditional writes lost); try again",
                s3(bucket, key)
            ),
        }
    }
}

impl fmt::Display for ArtifactRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArtifactRefusal::Unreadable {
                what,
                bucket,
                key,
                error,
            } => write!(f, "the {what} {} cannot be read: {error}", s3(bucket, key)),
            ArtifactRefusal::Cache { message } => f.write_str(message),
        }
    }
}

impl fmt::Display for RunEndRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunEndRefusal::Interrupted { run, kind, resume } => {
                let how = match (kind, resume) {
                    (_, None) => "run the command that started it again".to_string(),
                    (RunKind::Destroy, Some(c)) => {
                        format!("once its lock is released or expired, run it again with {c}")
                    }
                    (_, Some(c)) => format!("resume it with {c}"),
                };
                write!(
                    f,
                    "run {run} interrupted (Ctrl-C); its report is in report.json; {how}"
                )
            }
            RunEndRefusal::Stopped { error } => write!(f, "the local run stopped: {error}"),
            RunEndRefusal::CleanupFailed { error, cause } => {
                write!(f, "cleanup failed: {error}: {}", flatten_str(cause))
            }
        }
    }
}

impl fmt::Display for BackendRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BackendRefusal::NoStateMachine { kind, env_var, why } => {
                let why = match why {
                    NoMachineWhy::NoOutput { stack, output_key } => format!(
                        "the backend stack '{}' has no output {output_key}",
                        flatten_str(stack)
                    ),
                    NoMachineWhy::Error(e) => e.clone(),
                };
                write!(
                    f,
                    "no {kind} state machine: --state-machine-arn not given, {env_var} not set, and {why} \
                     (deploy the backend with make deploy, pass --backend-stack, or run with --local)"
                )
            }
            BackendRefusal::NotAStateMachineArn { arn } => {
                write!(f, "'{}' is not a state machine ARN", flatten_str(arn))
            }
        }
    }
}

impl fmt::Display for WorkflowRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WorkflowRefusal::DefinitionDoesNotLoad { name, error } => {
                write!(f, "the {name} definition does not load: {error}")
            }
            WorkflowRefusal::Unreadable { what, path, error } => {
                let what = match what {
                    WorkflowFile::Definition => "the definition",
                    WorkflowFile::Input => "the input file",
                };
                write!(f, "cannot read {what} {path}: {error}")
            }
            WorkflowRefusal::DoesNotLoad {
                file,
                error,
                missing,
            } => {
                write!(f, "{file}: {error}")?;
                if let Some(name) = missing {
                    write!(
                        f,
                        " (give it with --sub {name}=VALUE or --machine {name}=FILE)"
                    )?;
                }
                Ok(())
            }
            WorkflowRefusal::ExecutionFailed { error, cause } => {
                write!(f, "the execution failed ({error}): {cause}")
            }
        }
    }
}

impl fmt::Display for StateRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::view::state::resolve::{missing_nested_child, no_state_found};
        match self {
            StateRefusal::NoRecord {
                stack,
                region,
                bucket,
                prefix,
            } => f.write_str(&no_state_found(stack, region, bucket, prefix)),
            StateRefusal::MissingNestedChild {
                parent,
                logical_id,
                child,
                region,
            } => f.write_str(&missing_nested_child(parent, logical_id, child, region)),
        }
    }
}

impl fmt::Display for DestroyCommandRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DestroyCommandRefusal::Refused { refused, runs } => {
                f.write_str(&crate::view::plan::refused_summary(*refused, *runs))
            }
            DestroyCommandRefusal::NotConfirmed => {
                f.write_str("destroy not confirmed; nothing was deleted")
            }
        }
    }
}

impl fmt::Display for DestroyNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DestroyNote::Started { stack, run_id } => {
                write!(f, "destroy {}: run {run_id}", flatten_str(stack))
            }
            DestroyNote::Partial { stack } => write!(
                f,
                "destroy {}: not every resource was destroyed; see the report",
                or_unrenderable(printable_str(stack))
            ),
            DestroyNote::Stopped { why, not_started } => {
                let left: Vec<String> = not_started
                    .iter()
                    .map(|s| or_unrenderable(printable_str(s)))
                    .collect();
                match (why, left.is_empty()) {
                    (Some(why), false) => write!(f, "{why}; not started: {}", left.join(", ")),
                    (Some(why), true) => write!(f, "{why}"),
                    (None, false) => write!(f, "not started: {}", left.join(", ")),
                    (None, true) => Ok(()),
                }
            }
        }
    }
}

impl fmt::Display for DestroyStop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DestroyStop::Said(words) => f.write_str(words),
            DestroyStop::StepStopped {
                stack,
                error,
                cause,
            } => write!(
                f,
                "destroy {}: {error}: {cause}",
                or_unrenderable(printable_str(stack))
            ),
            DestroyStop::Failed { error, cause } => write!(f, "{error}: {cause}"),
            DestroyStop::NoReport => f.write_str("the destroy failed"),
        }
    }
}

impl fmt::Display for ExportCommandRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportCommandRefusal::Failed {
                stack,
                error,
                cause,
            } => {
                let stack = flatten_str(stack);
                if error == "Refused" {
                    write!(f, "export {stack} refused: {}", flatten_str(cause))
                } else {
                    write!(
                        f,
                        "export {stack} failed ({}): {}",
                        flatten_str(error),
                        flatten_str(cause)
                    )
                }
            }
            ExportCommandRefusal::NoPlan { stack, plan_run } => write!(
                f,
                "export {} refused: the plan run {plan_run} wrote no plan",
                flatten_str(stack)
            ),
            ExportCommandRefusal::Reuse { stack, why } => {
                write!(f, "export {} refused: {why}", flatten_str(stack))
            }
        }
    }
}

impl fmt::Display for OrphanCommandRefusal<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::view::repair as v;
        let words = match self {
            OrphanCommandRefusal::Held { message } => message.clone(),
            OrphanCommandRefusal::LockMalformed {
                ctx,
                detail,
                force_removes,
            } => v::orphan_lock_malformed(ctx, detail, *force_removes),
            OrphanCommandRefusal::LockChanged { ctx, was } => {
                v::orphan_lock_changed(ctx, was.as_deref())
            }
            OrphanCommandRefusal::HeldByExport { hold, flags } => {
                v::orphan_held_by_export(hold, flags.as_deref())
            }
            OrphanCommandRefusal::HoldUnknown { error } => format!(
                "{error}; nothing was changed (--abandon-export forgets the record without this check)"
            ),
            OrphanCommandRefusal::ChildRecord {
                child,
                child_region,
                bucket,
                prefix,
            } => v::orphan_child_record(child, child_region.as_deref(), bucket, prefix),
            OrphanCommandRefusal::Aborted(a) => v::orphan_aborted(a),
        };
        f.write_str(&words)
    }
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Usage::NoTerminal(what) => what.fmt(f),
            Usage::AnswerUnread { error } => write!(f, "could not read the answer: {error}"),
            Usage::ForceUnlockNeedsStack => {
                f.write_str("Stack name is required. Usage: cdkd-flow force-unlock <stack-name>")
            }
            Usage::NotAnExecutionArn { given } => write!(
                f,
                "'{}' is not an execution ARN (arn:aws:states:REGION:ACCOUNT:execution:MACHINE:NAME)",
                flatten_str(given)
            ),
            Usage::NotARunId { given, why } => write!(f, "'{}' is {why}", flatten_str(given)),
            Usage::NoGracefulStop { run } => write!(
                f,
                "run {run} is not a destroy run: it has no graceful stop; stop it at once with cdkd-flow runs stop --now {run} (the destroy runs it started carry on: stop each of them)"
            ),
            Usage::ReasonTooLong { verb, why } => write!(f, "runs {verb}: {why}"),
            Usage::TemplateNeedsStack => f.write_str(
                "--template needs the name of the stack to export: cdkd-flow export <STACK> --template <PATH>",
            ),
            Usage::NoStateBucket => f.write_str("the export input names no stateBucket"),
            Usage::NotNameValue { flag, given } => {
                write!(f, "{flag} takes NAME=VALUE, got '{given}'")
            }
            Usage::BadTimeScale => f.write_str("--time-scale must be a finite number >= 0"),
            Usage::NotJson { what, error } => write!(f, "{what} is not valid JSON: {error}"),
            Usage::EmptyStackRegion => f.write_str("--stack-region cannot be empty"),
            Usage::RunIdOfSeveral => f.write_str(
                "--run-id names the run of a single stack; leave it out when destroying several",
            ),
        }
    }
}

impl fmt::Display for NoTerminalFor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NoTerminalFor::RefreshObserved => f.write_str(
                "state refresh-observed asks for confirmation and stdin is not a terminal; pass -y / --yes",
            ),
            NoTerminalFor::OrphanResources => f.write_str(
                "state orphan asks for confirmation and stdin is not a terminal; pass -y / --yes (or -f / --force)",
            ),
            NoTerminalFor::OrphanStacks => f.write_str(
                "state orphan asks for confirmation and stdin is not a terminal; pass -y / --yes",
            ),
            NoTerminalFor::Destroy => f.write_str(
                "destroy asks for confirmation and stdin is not a terminal; pass -y (--yes) to destroy without asking, or --dry-run to see the plan",
            ),
            NoTerminalFor::Export { stack } => write!(
                f,
                "export {stack}: no terminal to confirm on; pass -y to migrate without asking"
            ),
            NoTerminalFor::ExportResume { stack, run_id } => write!(
                f,
                "export {stack}: run {run_id} was interrupted and there is no terminal to confirm its resume on; pass -y to resume it"
            ),
        }
    }
}

impl fmt::Display for ExportNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportNote::Uploaded {
                stack,
                run_id,
                templates,
                bucket,
                run_folder,
            } => write!(
                f,
                "export {}: run {run_id}, {templates} template(s) uploaded to s3://{}/{}",
                flatten_str(stack),
                flatten_str(bucket),
                flatten_str(run_folder)
            ),
            ExportNote::NestedWithoutTemplate { stack, logical_ids } => {
                let ids: Vec<String> = logical_ids.iter().map(|i| flatten_str(i)).collect();
                write!(
                    f,
                    "warning: {} has nested stacks ({}) and --template reads no nested template: a child with a cdkd record is refused; export from the cloud assembly (--cdk-out or --app)",
                    flatten_str(stack),
                    ids.join(", ")
                )
            }
            ExportNote::Planning { stack } => write!(f, "export {}: planning", flatten_str(stack)),
            ExportNote::WaitingForPlan { stack, plan_run } => write!(
                f,
                "export {}: waiting for the plan of run {plan_run}",
                flatten_str(stack)
            ),
            ExportNote::Migrating { stack, run_id } => {
                write!(f, "export {}: migrating (run {run_id})", flatten_str(stack))
            }
            ExportNote::NothingToMigrate { stack } => write!(
                f,
                "export {}: nothing to migrate (no importable resource, nothing for phase 2); nothing was changed",
                flatten_str(stack)
            ),
            ExportNote::Cancelled { stack } => {
                write!(f, "export {}: cancelled; nothing was changed", flatten_str(stack))
            }
            ExportNote::EndedLockReleased {
                stack,
                lock_stack,
                owner,
            } => write!(
                f,
                "export {}: released the lock of {} the ended run {} had left",
                flatten_str(stack),
                flatten_str(lock_stack),
                flatten_str(owner)
            ),
            ExportNote::EndedLockKept {
                stack,
                lock_stack,
                error,
            } => write!(
                f,
                "warning: export {}: the lock of {} the ended run left was not released: {error}",
                flatten_str(stack),
                flatten_str(lock_stack)
            ),
            ExportNote::AlreadyMigrated { stack, run_id, cfn } => write!(
                f,
                "export {}: run {run_id} already migrated it to CloudFormation stack {}; nothing to do",
                flatten_str(stack),
                flatten_str(cfn)
            ),
            ExportNote::Interrupted {
                stack,
                run_id,
                last_step,
                cfn,
            } => {
                let at = last_step
                    .map(|l| format!(" (last step: {})", flatten_str(l)))
                    .unwrap_or_default();
                write!(
                    f,
                    "export {}: run {run_id} was interrupted{at}; CloudFormation stack {} is that run's",
                    flatten_str(stack),
                    flatten_str(cfn)
                )
            }
            ExportNote::DryRunOfInterrupted { stack, run_id } => write!(
                f,
                "export {}: nothing was planned; the same command without --dry-run resumes run {run_id}",
                flatten_str(stack)
            ),
            ExportNote::NotResumed { stack, run_id } => write!(
                f,
                "export {}: not resumed; nothing was changed. Run the same command again to resume run {run_id}",
                flatten_str(stack)
            ),
            ExportNote::Resuming { stack, run_id } => {
                write!(f, "export {}: resuming run {run_id}", flatten_str(stack))
            }
            ExportNote::CrossStack { reads, strict } => {
                let refused = if *strict {
                    " (a real run is refused under --strict-cross-stack)"
                } else {
                    ""
                };
                write!(f, "warning: {reads}{refused}")
            }
            ExportNote::WouldBeRefused { why } => {
                write!(f, "warning: a real run would be refused: {why}")
            }
            ExportNote::AskMigrate { stack } => write!(
                f,
                "Import these resources into CloudFormation and delete the cdkd record of {} afterwards? [y/N] ",
                flatten_str(stack)
            ),
            ExportNote::AskResume { stack, run_id } => {
                write!(f, "Resume run {run_id} of {}? [y/N] ", flatten_str(stack))
            }
        }
    }
}

impl fmt::Display for RunsNote<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RunsNote::FoldersUnread { error } => {
                write!(f, "warning: the deployed runs' folders were not read: {error}")
            }
            RunsNote::ListingWithoutBackend { backend } => write!(
                f,
                "note: no deployed backend found ({backend}); listing the runs of the state bucket from their folders (a deployed run's status is UNKNOWN)"
            ),
            RunsNote::LocalNotListed { error } => {
                write!(f, "warning: the local runs were not listed: {error}")
            }
            RunsNote::AlreadyEnded { run, status } => {
                write!(f, "run {run} has already ended: {}", flatten_str(status))
            }
            RunsNote::StoppedNow { run } => write!(f, "run {run}: stopped (ABORTED)"),
            RunsNote::StopAlreadyRequested { run } => {
                write!(f, "run {run}: a stop was already requested")
            }
            RunsNote::StopRequested { run } => write!(
                f,
                "run {run}: stop requested; it starts no new deletes, waits for those in flight, releases the lock and writes its report (follow it with cdkd-flow runs watch {run})"
            ),
            RunsNote::LocalDecided { decided: a, unseen } => {
                let carries_on = match unseen {
                    Some(why) => format!(
                        "its export process cannot be seen from here ({}): if it still waits, it carries on within a few seconds",
                        flatten_str(&why.to_string())
                    ),
                    None => "the export process waiting on it carries on within a few seconds".into(),
                };
                write!(
                    f,
                    "run {}: {}; {carries_on} (the decision is in approval.json)",
                    flatten_str(&a.run_id),
                    crate::view::approval::decision_words(a)
                )
            }
            RunsNote::Decided { run, decided: a } => {
                let next = match &a.decision {
                    Some(d) if d.approved => "the run goes on to the lock and the migration",
                    _ => "the run ends failed (Rejected); nothing was locked or changed",
                };
                write!(
                    f,
                    "run {run}: {}; {next} (follow it with cdkd-flow runs watch {run})",
                    crate::view::approval::decision_words(a)
                )
            }
            RunsNote::NotTold {
                run,
                decided: a,
                error,
            } => write!(
                f,
                "run {run}: the decision ({}) is recorded in approval.json, but the run was not told: {error}",
                crate::view::approval::decision_words(a)
            ),
            RunsNote::Listed { objects } => {
                write!(f, "listed {objects} objects under the run prefix...")
            }
            RunsNote::Deleted { done, total } => write!(f, "deleted {done} of {total} objects..."),
            RunsNote::NoStateMachine { backend_stack } => write!(
                f,
                "note: no deployed state machine found (the --*-state-machine-arn options, the environment, the backend stack '{}'): runs without run.json are told from their files",
                flatten_str(backend_stack)
            ),
            RunsNote::ShowingFolder { backend, run } => write!(
                f,
                "note: no deployed backend found ({backend}); showing run {run} from its folder (its execution's status is UNKNOWN)"
            ),
            RunsNote::Started {
                kind,
                run,
                reattached,
                execution_arn,
            } => {
                let verb = if *reattached {
                    "already started; watching"
                } else {
                    "started"
                };
                write!(f, "{kind} run {run} {verb} ({})", flatten_str(execution_arn))
            }
            RunsNote::WatchWith { run } => write!(f, "watch it with: cdkd-flow runs watch {run}"),
            RunsNote::CtrlCStop { run } => write!(
                f,
                "run {run}: stop requested (Ctrl-C): no new deletes start; those in flight finish, the lock is released and the report written. Ctrl-C again stops at once"
            ),
            RunsNote::ConnectionLost { error, what } => {
                write!(f, "  connection lost ({error}); retrying {what}")
            }
            RunsNote::ContinuesIn { execution } => {
                write!(f, "run continues in execution {}", flatten_str(execution))
            }
            RunsNote::ListsUnreadable {
                bucket,
                run_folder,
                error,
            } => write!(
                f,
                "warning: the cleanup's lists in {} are not readable: {}",
                s3(bucket, run_folder),
                flatten_str(error)
            ),
            RunsNote::NoReportYet { run } => write!(
                f,
                "note: run {run} has written no report yet, and its execution cannot be followed without the deployed backend: run `cdkd-flow runs watch {run}` again once the backend is reachable"
            ),
        }
    }
}
