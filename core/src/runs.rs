//! Local runs (`export --local`, `destroy --local`): what such a run writes when it
//! starts (`<prefix>/_runs/<run-id>/run.json`), and whether it is running, has ended or
//! was interrupted, decided from that file, the run's report and the liveness of its
//! process or its lock (docs/cli.md, `runs list | show | watch --local`).

use serde::{Deserialize, Serialize};

use crate::export::execute::{ExportRun, StackStage};
use crate::keys::run_prefix;
use crate::run::{Outcome, RunId, RunKind};
use crate::text::{flatten_str, shell_quote};

/// The program name printed in commands.
pub const PROGRAM: &str = "cdkd-flow";

/// `<prefix>/_runs/<run-id>/run.json`.
pub fn run_file_key(prefix: &str, run_id: &str) -> String {
    format!("{}/run.json", run_prefix(prefix, run_id))
}

/// The run id of a listed key that is a run's `run.json` (`<prefix>/_runs/<id>/run.json`).
pub fn listed_run_file<'a>(prefix: &str, key: &'a str) -> Option<&'a str> {
    let root = run_prefix(prefix, "");
    let id = key.strip_prefix(&root)?.strip_suffix("/run.json")?;
    (!id.is_empty() && !id.contains('/')).then_some(id)
}

/// How far a run's start may lie after its `run.json`'s last write as S3 lists it: the
/// clock of the host that wrote `startedMs` may run ahead of S3's, by less than the 15
/// minutes past which S3 refuses a signed request (`RequestTimeTooSkewed`).
pub const START_SKEW_MS: i64 = 15 * 60_000;

/// `runs list --local` reads `run.json` files in order of their last write, newest
/// first, and stops once the `limit` newest starts are known: a run not read yet started
/// no later than its file's last write (plus [`START_SKEW_MS`]), so once `limit` runs
/// read so far started at or after that, no later read can displace them. `started`:
/// the starts read so far; `next_write_ms`: the last write of the next file to read.
pub fn newest_known(limit: usize, started: &[i64], next_write_ms: Option<i64>) -> bool {
    let Some(next) = next_write_ms else {
        return true;
    };
    if limit == 0 {
        return true;
    }
    if started.len() < limit {
        return false;
    }
    let mut s = started.to_vec();
    s.sort_unstable_by(|a, b| b.cmp(a));
    s[limit - 1] >= next.saturating_add(START_SKEW_MS)
}

/// The first pause of a follower of a run before it reads the run's progress again.
pub const FOLLOW_FIRST_MS: u64 = 1_000;
/// The longest pause of a follower: a stack operation's longest poll pause, so a follower
/// lags the run by no more than the run lags CloudFormation.
pub const FOLLOW_CAP_MS: u64 = 8_000;

/// How long a follower of a run (`export`'s progress lines, `runs watch`) waits before
/// its next read of the run's progress, after `unchanged` reads in a row found nothing
/// new (docs/cli.md, "Following a run"): 1 s after a change, doubling while nothing
/// changes, up to 8 s.
pub fn follow_delay_ms(unchanged: u32) -> u64 {
    follow_delay_from_ms(FOLLOW_FIRST_MS, unchanged)
}

/// [`follow_delay_ms`] of a follower whose first pause is `first_ms` (a destroy's or a
/// cleanup's bars, `--poll-ms`): `first_ms` after a change, doubling while nothing
/// changes, up to [`FOLLOW_CAP_MS`] (or `first_ms`, when that is longer).
pub fn follow_delay_from_ms(first_ms: u64, unchanged: u32) -> u64 {
    let cap = FOLLOW_CAP_MS.max(first_ms);
    first_ms.saturating_mul(1u64 << unchanged.min(16)).min(cap)
}

/// The run id of an export's plan run (`<run-id>-plan`), the run it plans for.
pub fn planned_run(run_id: &str) -> Option<&str> {
    run_id.strip_suffix("-plan").filter(|r| !r.is_empty())
}

/// The plan run `<run-id>-plan` of a real export that planned successfully leaves its
/// `run.json` without an end when its run follows: the run's own `run.json` (`run`)
/// says it ended, and when (the run's start). Anything else is left as it is
/// (docs/runs.md, "The objects a run writes").
pub fn ended_by_its_run(plan_run: &mut LocalRun, run: Option<&LocalRun>) {
    let Some(run) = run else {
        return;
    };
    if plan_run.outcome.is_none()
        && plan_run.plan_only
        && planned_run(&plan_run.run_id) == Some(run.run_id.as_str())
    {
        plan_run.outcome = Some(Outcome::Succeeded);
        plan_run.ended_ms = Some(run.started_ms);
    }
}

/// What a run's folder says of a run that wrote no `run.json` (a deployed run), read
/// without its execution: its stack (the report's, else the root of its progress record:
/// the one stack whose cdkd name holds no `~`, a nested child's separator) and when it
/// started (its progress record's `startedMs`).
pub fn folder_run(
    progress: Option<&serde_json::Value>,
    report: Option<&serde_json::Value>,
) -> (Option<String>, Option<i64>) {
    let root_of = |v: &serde_json::Value| -> Option<String> {
        if let Some(s) = v.get("stack").and_then(serde_json::Value::as_str) {
            return Some(s.to_string());
        }
        v.get("stacks")?
            .as_array()?
            .iter()
            .filter_map(|s| s.get("stack").and_then(serde_json::Value::as_str))
            .find(|s| !s.contains('~'))
            .map(str::to_string)
    };
    let stack = report
        .and_then(root_of)
        .or_else(|| progress.and_then(root_of));
    let started = progress
        .and_then(|p| p.get("startedMs"))
        .and_then(serde_json::Value::as_i64);
    (stack, started)
}

/// `run.json`: what a local run is, written by the CLI when it starts, completed
/// (`endedMs`, `outcome`) when it ends by itself.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocalRun {
    pub run_id: RunId,
    /// `export` or `destroy`.
    pub kind: RunKind,
    pub stack: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stack_region: Option<String>,
    /// A run that only plans (an export's `--dry-run`, or the plan run `<run-id>-plan`
    /// of a real export).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan_only: bool,
    /// The command line that started it, without the program name.
    #[serde(default)]
    pub args: Vec<String>,
    /// The host and process id of the CLI that runs it.
    pub host: String,
    pub pid: u32,
    pub started_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_ms: Option<i64>,
    /// How the process saw it end: `succeeded`, `failed` or `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<Outcome>,
}

impl LocalRun {
    /// The command that runs it again (for an interrupted export: resumes it): the same
    /// command line. `None` when an argument cannot be printed faithfully on one line.
    pub fn resume_command(&self) -> Option<String> {
        resume_command(&self.args)
    }
}

/// `cdkd-flow <args>`, each argument shell-quoted; `None` when one holds a character
/// that would not print as itself (a control character, a line break).
pub fn resume_command(args: &[String]) -> Option<String> {
    let mut out = PROGRAM.to_string();
    for a in args {
        if flatten_str(a) != *a || a.chars().any(char::is_control) {
            return None;
        }
        out.push(' ');
        out.push_str(&shell_quote(a));
    }
    Some(out)
}

/// Whether a local run of `kind` started again under its own id forgets the end an
/// earlier attempt left (`outcome`: its report's), report and message markers, so that
/// its own end is reported and told (docs/notifications.md, "Once per run and kind: at most once"). A destroy's, whatever
/// it was (the same command again after a Ctrl-C, a partial end, a run id a scheduled
/// job reuses); an export's only when interrupted (its `Resume` step forgets any other
/// as it resumes, and a migrated run is never run again).
pub fn forgets_earlier_end(kind: &RunKind, outcome: &Outcome) -> bool {
    *kind == RunKind::Destroy || *outcome == Outcome::Interrupted
}

/// What a `--parameter KEY=VALUE` value becomes in what a run keeps and tells.
pub const MASKED_VALUE: &str = "<value>";

/// A command line as a run keeps it (`run.json`) and prints it in its reports and
/// messages: each `--parameter KEY=VALUE` (or `--parameter=KEY=VALUE`) keeps its key and
/// shows [`MASKED_VALUE`] for its value, which may be a secret (docs/cli.md, "Local
/// runs"); every other argument as given.
pub fn masked_args(args: &[String]) -> Vec<String> {
    let mask = |kv: &str| match kv.split_once('=') {
        Some((k, _)) => format!("{k}={MASKED_VALUE}"),
        None => kv.to_string(),
    };
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    for a in args {
        if value_next {
            out.push(mask(a));
            value_next = false;
        } else if a == "--parameter" {
            out.push(a.clone());
            value_next = true;
        } else if let Some(kv) = a.strip_prefix("--parameter=") {
            out.push(format!("--parameter={}", mask(kv)));
        } else {
            out.push(a.clone());
        }
    }
    out
}

/// What the lock of a run's stack says about the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunLock {
    /// The lock is held by this run (owner `cdkd-flow:<run-id>...`), expiring then (on
    /// S3's clock, `LockInfo::expiry_ms`).
    Held { expires_ms: i64 },
    /// No lock, or someone else's.
    NotHeld,
}

/// Whether a run's lock names the run: `cdkd-flow:<run-id>`, or a local owner
/// `cdkd-flow:<run-id>@<host>:<pid>`.
pub fn lock_owned_by_run(owner: &str, run_id: &str) -> bool {
    let Some(rest) = owner.strip_prefix("cdkd-flow:") else {
        return false;
    };
    rest == run_id
        || rest
            .strip_prefix(run_id)
            .is_some_and(|tail| tail.starts_with('@'))
}

/// Where a local run stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalState {
    /// Its process is alive (same host), or its lock is held and fresh (another host).
    Running,
    /// It wrote its report (or recorded its end): `outcome` from the report.
    Ended { outcome: Outcome },
    /// No report and nothing runs it any more: `why` says how that is known.
    Interrupted { why: Interruption },
    /// Another host's run with no lock of its own to tell by (planning, or waiting
    /// for approval).
    Unknown { why: Unseen },
}

/// How a local run is known to be interrupted, as data; the runs view words it.
/// `runs list --local --json` prints its words (its serde goes through `String`); read
/// back, they are its `Recorded` variant.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Interruption {
    /// The interrupted process itself said so (Ctrl-C), in `run.json` or its report.
    CtrlC,
    /// Its process `pid` on this host (`host`, as its `run.json` names it) is gone.
    ProcessGone { pid: u32, host: String },
    /// Its lock expired at `expires_ms` (S3's clock) and nothing renews it.
    LockExpired { expires_ms: i64 },
    /// Words read back: as they were written.
    Recorded(String),
}

/// Why a local run's state cannot be told, as data; the runs view words it (and
/// `runs list --local --json` prints the words, as for [`Interruption`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(into = "String", from = "String")]
pub enum Unseen {
    /// It runs on another host (`host`, process `pid`) and holds no lock to tell by.
    NoLock { host: String, pid: u32 },
    /// Words read back: as they were written.
    Recorded(String),
}

impl From<String> for Interruption {
    fn from(words: String) -> Self {
        Interruption::Recorded(words)
    }
}

impl From<String> for Unseen {
    fn from(words: String) -> Self {
        Unseen::Recorded(words)
    }
}

impl LocalState {
    /// `running`, `ended`, `interrupted` or `unknown`.
    pub fn word(&self) -> &'static str {
        match self {
            LocalState::Running => "running",
            LocalState::Ended { .. } => "ended",
            LocalState::Interrupted { .. } => "interrupted",
            LocalState::Unknown { .. } => "unknown",
        }
    }
}

/// Why `runs approve|reject --local` refuses local run `run_id` (docs/export.md,
/// "Approval (export-approval)"): it ended, or was interrupted, so no export process
/// waits for a decision and nothing would act on one. `verb`: `approve` or `reject`;
/// `decided`: what its `approval.json` says was decided (`approved by alice@laptop at
/// ...`), when anything. The way out of an interrupted run is its resume command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnswerRefusal {
    pub run_id: RunId,
    pub verb: String,
    pub decided: Option<String>,
    pub state: NoWaiter,
}

/// Why no process of a local run waits for a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NoWaiter {
    /// It ended, with `outcome`.
    Ended { outcome: Outcome },
    /// It was interrupted (`why`); `resume`: the command that resumes it, when it
    /// prints as itself ([`LocalRun::resume_command`]).
    Interrupted {
        why: Interruption,
        resume: Option<String>,
    },
}

/// The refusal of `runs approve|reject --local` ([`AnswerRefusal`]) for local run `run`
/// in `state`; `None`: the run may be waiting (it runs; or it runs on another host and
/// cannot be told).
pub fn answer_refusal(
    run: &LocalRun,
    state: &LocalState,
    verb: &str,
    decided: Option<&str>,
) -> Option<AnswerRefusal> {
    let state = match state {
        LocalState::Ended { outcome } => NoWaiter::Ended {
            outcome: outcome.clone(),
        },
        LocalState::Interrupted { why } => NoWaiter::Interrupted {
            why: why.clone(),
            resume: run.resume_command(),
        },
        LocalState::Running | LocalState::Unknown { .. } => return None,
    };
    Some(AnswerRefusal {
        run_id: run.run_id.clone(),
        verb: verb.to_string(),
        decided: decided.map(str::to_string),
        state,
    })
}

/// Where a local run stands, from what it wrote so far (`runs list | show --local`'s
/// phase, and the words an interruption's cause names; the runs view puts it in words).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum LocalPhase {
    /// No progress record yet: it plans (or asks to go on).
    Planning,
    /// An export before its lock whose approval request has no decision yet.
    WaitingForApproval,
    /// A plan run that ended: it made its plan.
    Plan,
    /// An export with a progress record: its least advanced stack's stage (`None`: no
    /// stack yet, it takes its locks), and whether it stopped on a failure.
    Export {
        stage: Option<StackStage>,
        stopped: bool,
    },
    /// A destroy with a progress record: its waves so far, its records settled of all,
    /// and whether a graceful stop was asked for.
    Destroy {
        waves: u32,
        settled: u32,
        total: u32,
        stop_requested: bool,
    },
}

impl LocalPhase {
    /// An export's phase from its progress record.
    pub fn of_export(run: &ExportRun) -> LocalPhase {
        LocalPhase::Export {
            stage: run.least_stage(),
            stopped: run.failure.is_some(),
        }
    }
}

/// What is known about a local run besides its `run.json`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Evidence<'a> {
    /// The outcome its `report.json` states, when it has one.
    pub report_outcome: Option<&'a Outcome>,
    /// This host's name.
    pub host: &'a str,
    /// Whether its process is alive, when it ran on this host.
    pub alive: Option<bool>,
    pub lock: RunLock,
    /// Now on S3's clock, which `lock`'s expiry is on (docs/state-and-lock.md, "Lock time is S3's").
    pub now_ms: i64,
}

/// The state of a local run: ended when it has a report (or recorded its end); else
/// running while its process is alive (same host) or its lock is fresh (another host);
/// interrupted when its process is gone or its lock expired.
pub fn local_state(run: &LocalRun, e: &Evidence<'_>) -> LocalState {
    // The interrupted process itself (Ctrl-C) says so, in run.json or its report.
    let interrupted = Some(&Outcome::Interrupted);
    if run.outcome.as_ref() == interrupted || e.report_outcome == interrupted {
        return LocalState::Interrupted {
            why: Interruption::CtrlC,
        };
    }
    if let Some(outcome) = e.report_outcome.or(run.outcome.as_ref()) {
        return LocalState::Ended {
            outcome: outcome.clone(),
        };
    }
    let expired = |expires_ms: i64| LocalState::Interrupted {
        why: Interruption::LockExpired { expires_ms },
    };
    if run.host == e.host {
        return match (e.alive, e.lock) {
            (Some(false), _) => LocalState::Interrupted {
                why: Interruption::ProcessGone {
                    pid: run.pid,
                    host: run.host.clone(),
                },
            },
            // A live process renews its lock: one that let it expire is not this run
            // any more (its pid was reused) or is hung.
            (_, RunLock::Held { expires_ms }) if expires_ms <= e.now_ms => expired(expires_ms),
            _ => LocalState::Running,
        };
    }
    match e.lock {
        RunLock::Held { expires_ms } if expires_ms > e.now_ms => LocalState::Running,
        RunLock::Held { expires_ms } => expired(expires_ms),
        RunLock::NotHeld => LocalState::Unknown {
            why: Unseen::NoLock {
                host: run.host.clone(),
                pid: run.pid,
            },
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run() -> LocalRun {
        LocalRun {
            run_id: "export-App-1".into(),
            kind: RunKind::Export,
            stack: "App".into(),
            args: vec![
                "export".into(),
                "App".into(),
                "--template".into(),
                "my template.json".into(),
                "--local".into(),
            ],
            host: "laptop".into(),
            pid: 42,
            started_ms: 1_795_965_752_000,
            ..LocalRun::default()
        }
    }

    /// Only a run that ended or was interrupted refuses an answer: as data, its id, the
    /// verb, what was decided, and (interrupted) why and the command that resumes it.
    #[test]
    fn an_answer_is_refused_only_for_a_run_that_waits_for_nothing() {
        let r = run();
        assert_eq!(
            answer_refusal(&r, &LocalState::Running, "approve", None),
            None
        );
        let unknown = LocalState::Unknown {
            why: Unseen::Recorded("x".into()),
        };
        assert_eq!(answer_refusal(&r, &unknown, "approve", None), None);
        let ended = LocalState::Ended {
            outcome: Outcome::Migrated,
        };
        assert_eq!(
            answer_refusal(&r, &ended, "reject", Some("approved by alice")),
            Some(AnswerRefusal {
                run_id: "export-App-1".into(),
                verb: "reject".into(),
                decided: Some("approved by alice".into()),
                state: NoWaiter::Ended {
                    outcome: Outcome::Migrated
                },
            })
        );
        let gone = LocalState::Interrupted {
            why: Interruption::ProcessGone {
                pid: 42,
                host: "laptop".into(),
            },
        };
        assert_eq!(
            answer_refusal(&r, &gone, "approve", None).map(|a| a.state),
            Some(NoWaiter::Interrupted {
                why: Interruption::ProcessGone {
                    pid: 42,
                    host: "laptop".into(),
                },
                resume: Some("cdkd-flow export App --template 'my template.json' --local".into()),
            })
        );
    }

    fn evidence(alive: Option<bool>, lock: RunLock) -> Evidence<'static> {
        Evidence {
            report_outcome: None,
            host: "laptop",
            alive,
            lock,
            now_ms: 1_795_965_800_000,
        }
    }

    #[test]
    fn a_destroy_run_again_forgets_any_earlier_end_an_export_only_an_interruption() {
        let (destroy, export) = (RunKind::Destroy, RunKind::Export);
        assert!(forgets_earlier_end(&destroy, &Outcome::Partial));
        assert!(forgets_earlier_end(&destroy, &Outcome::Destroyed));
        assert!(forgets_earlier_end(&export, &Outcome::Interrupted));
        assert!(!forgets_earlier_end(&export, &Outcome::Failed));
        assert!(!forgets_earlier_end(&export, &Outcome::Migrated));
    }

    #[test]
    fn a_parameters_value_is_never_kept_or_told_its_key_is() {
        let args: Vec<String> = [
            "export",
            "App",
            "--parameter",
            "DbPassword=s3cret=x",
            "--parameter=Env=prod",
            "--local",
            "--run-id",
            "r1",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(
            masked_args(&args),
            [
                "export",
                "App",
                "--parameter",
                "DbPassword=<value>",
                "--parameter=Env=<value>",
                "--local",
                "--run-id",
                "r1",
            ]
        );
        let cmd = resume_command(&masked_args(&args)).unwrap();
        assert!(!cmd.contains("s3cret") && !cmd.contains("prod"), "{cmd}");
    }

    #[test]
    fn resume_command_is_the_same_command_quoted() {
        assert_eq!(
            run().resume_command().as_deref(),
            Some("cdkd-flow export App --template 'my template.json' --local")
        );
        assert_eq!(resume_command(&["a\nb".into()]), None);
        assert_eq!(resume_command(&["a\u{1b}[2J".into()]), None);
    }

    #[test]
    fn a_report_ends_a_run_whatever_its_process() {
        let e = Evidence {
            report_outcome: Some(&Outcome::Migrated),
            ..evidence(Some(true), RunLock::NotHeld)
        };
        assert_eq!(
            local_state(&run(), &e),
            LocalState::Ended {
                outcome: "migrated".into()
            }
        );
    }

    #[test]
    fn same_host_alive_is_running_and_gone_is_interrupted() {
        assert_eq!(
            local_state(&run(), &evidence(Some(true), RunLock::NotHeld)),
            LocalState::Running
        );
        let s = local_state(&run(), &evidence(Some(false), RunLock::NotHeld));
        assert_eq!(
            s,
            LocalState::Interrupted {
                why: Interruption::ProcessGone {
                    pid: 42,
                    host: "laptop".into()
                }
            }
        );
        assert_eq!(s.word(), "interrupted");
        assert!(
            matches!(&s, LocalState::Interrupted { why } if why.to_string() == "its process 42 on laptop is gone")
        );
    }

    #[test]
    fn a_live_process_whose_run_let_its_lock_expire_is_interrupted() {
        let stale = RunLock::Held {
            expires_ms: 1_795_965_700_000,
        };
        assert_eq!(
            local_state(&run(), &evidence(Some(true), stale)).word(),
            "interrupted"
        );
    }

    #[test]
    fn another_hosts_run_is_told_by_its_lock() {
        let mut r = run();
        r.host = "ci-runner".into();
        let fresh = RunLock::Held {
            expires_ms: 1_795_965_900_000,
        };
        assert_eq!(local_state(&r, &evidence(None, fresh)), LocalState::Running);
        let stale = RunLock::Held {
            expires_ms: 1_795_965_700_000,
        };
        assert_eq!(
            local_state(&r, &evidence(None, stale)),
            LocalState::Interrupted {
                why: Interruption::LockExpired {
                    expires_ms: 1_795_965_700_000
                }
            }
        );
        let expired = Interruption::LockExpired {
            expires_ms: 1_795_965_700_000,
        };
        assert_eq!(
            expired.to_string(),
            "its lock expired at 2026-11-29T15:21:40Z"
        );
        assert_eq!(
            local_state(&r, &evidence(None, RunLock::NotHeld)).word(),
            "unknown"
        );
    }

    #[test]
    fn an_end_recorded_in_run_json_counts_without_a_report() {
        let mut r = run();
        r.outcome = Some("succeeded".into());
        assert_eq!(
            local_state(&r, &evidence(Some(false), RunLock::NotHeld)),
            LocalState::Ended {
                outcome: "succeeded".into()
            }
        );
        r.outcome = Some("interrupted".into());
        assert_eq!(
            local_state(&r, &evidence(Some(false), RunLock::NotHeld)).word(),
            "interrupted"
        );
        let e = Evidence {
            report_outcome: Some(&Outcome::Interrupted),
            ..evidence(Some(false), RunLock::NotHeld)
        };
        assert_eq!(
            local_state(&run(), &e),
            LocalState::Interrupted {
                why: Interruption::CtrlC
            }
        );
        assert_eq!(
            Interruption::CtrlC.to_string(),
            "it was interrupted (Ctrl-C)"
        );
    }

    #[test]
    fn a_lock_names_its_run_deployed_or_local() {
        assert!(lock_owned_by_run("cdkd-flow:export-App-1", "export-App-1"));
        assert!(lock_owned_by_run(
            "cdkd-flow:export-App-1@laptop:42",
            "export-App-1"
        ));
        assert!(!lock_owned_by_run(
            "cdkd-flow:export-App-12",
            "export-App-1"
        ));
        assert!(!lock_owned_by_run("alice@laptop:42", "export-App-1"));
    }

    #[test]
    fn run_files_are_found_among_listed_keys() {
        assert_eq!(
            listed_run_file("cdkd", "cdkd/_runs/export-A-1/run.json"),
            Some("export-A-1")
        );
        assert_eq!(
            listed_run_file("cdkd", "cdkd/_runs/export-A-1/report.json"),
            None
        );
        assert_eq!(listed_run_file("cdkd", "cdkd/_runs/a/b/run.json"), None);
        assert_eq!(
            listed_run_file("cdkd", "cdkd/App/us-east-1/state.json"),
            None
        );
        assert_eq!(listed_run_file("other", "cdkd/_runs/x/run.json"), None);
    }

    #[test]
    fn run_json_files_are_read_until_the_newest_starts_are_known() {
        let m = START_SKEW_MS;
        // Nothing left to read, or nothing wanted.
        assert!(newest_known(20, &[], None));
        assert!(newest_known(0, &[], Some(5)));
        // Fewer than the limit read: go on.
        assert!(!newest_known(2, &[10 * m], Some(0)));
        // The second newest start is after the next file's last write and its skew.
        assert!(newest_known(2, &[10 * m, 3 * m, 9 * m], Some(2 * m)));
        // A run whose file was written later may have started later: read it.
        assert!(!newest_known(2, &[10 * m, 3 * m], Some(3 * m - 1)));
    }

    #[test]
    fn plan_runs_name_the_run_they_plan_for() {
        assert_eq!(planned_run("export-App-1-plan"), Some("export-App-1"));
        assert_eq!(planned_run("export-App-1"), None);
        assert_eq!(planned_run("-plan"), None);
    }

    #[test]
    fn run_json_round_trips_in_camel_case() {
        let v = serde_json::to_value(run()).unwrap();
        assert_eq!(v["runId"], "export-App-1");
        assert_eq!(v["startedMs"], 1_795_965_752_000i64);
        assert!(v.get("endedMs").is_none());
        let back: LocalRun = serde_json::from_value(v).unwrap();
        assert_eq!(back, run());
    }

    #[test]
    fn a_run_json_with_words_this_version_does_not_know_reads_and_is_written_back_unchanged() {
        let v = serde_json::json!({
            "runId": "repair-App-1", "kind": "repair", "stack": "App", "args": [],
            "host": "h", "pid": 1, "startedMs": 5, "endedMs": 6, "outcome": "half-done"
        });
        let r: LocalRun = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(r.kind, RunKind::Other("repair".into()));
        assert_eq!(r.outcome, Some(Outcome::Other("half-done".into())));
        assert_eq!(serde_json::to_value(&r).unwrap(), v);
        // Its end reads as an end, in its own word.
        assert_eq!(
            local_state(&r, &evidence(Some(false), RunLock::NotHeld)),
            LocalState::Ended {
                outcome: Outcome::Other("half-done".into())
            }
        );
    }

    #[test]
    fn a_plan_run_ends_when_its_run_starts_and_not_otherwise() {
        let plan = LocalRun {
            run_id: "export-App-1-plan".into(),
            kind: RunKind::Export,
            stack: "App".into(),
            plan_only: true,
            started_ms: 10,
            ..Default::default()
        };
        let run = LocalRun {
            run_id: "export-App-1".into(),
            started_ms: 20,
            ..plan.clone()
        };
        let mut p = plan.clone();
        ended_by_its_run(&mut p, Some(&run));
        assert_eq!(p.outcome, Some(Outcome::Succeeded));
        assert_eq!(p.ended_ms, Some(20));
        // No run: still open; another run: not its; an end written: kept.
        let mut p = plan.clone();
        ended_by_its_run(&mut p, None);
        assert_eq!(p.outcome, None);
        let other = LocalRun {
            run_id: "export-App-2".into(),
            ..run.clone()
        };
        let mut p = plan.clone();
        ended_by_its_run(&mut p, Some(&other));
        assert_eq!(p.outcome, None);
        let mut p = LocalRun {
            outcome: Some("failed".into()),
            ..plan.clone()
        };
        ended_by_its_run(&mut p, Some(&run));
        assert_eq!(p.outcome, Some(Outcome::Failed));
    }

    #[test]
    fn a_deployed_runs_folder_names_its_root_stack_and_its_start() {
        let progress = serde_json::json!({
            "runId": "r", "startedMs": 42,
            "stacks": [{"stack": "App~Child"}, {"stack": "App"}]
        });
        assert_eq!(
            folder_run(Some(&progress), None),
            (Some("App".into()), Some(42))
        );
        let report = serde_json::json!({"stack": "Other", "stacks": []});
        assert_eq!(
            folder_run(Some(&progress), Some(&report)),
            (Some("Other".into()), Some(42))
        );
        let export_report = serde_json::json!({"stacks": [{"stack": "App"}, {"stack": "App~C"}]});
        assert_eq!(
            folder_run(None, Some(&export_report)),
            (Some("App".into()), None)
        );
        assert_eq!(folder_run(None, None), (None, None));
    }
}
