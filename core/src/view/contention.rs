//! The words of a lock's contention (docs/state-and-lock.md, "The contention refusal"): the
//! refusal line naming the holder, its operation, since when it holds the lock, when the
//! lock expires, and the recovery command (`cdkd-flow force-unlock …`) when every value in
//! it can be printed faithfully; the advice for an export or destroy run's lock; what stands
//! where a lost lock was; what a stopped destroy leaves held; the state flags of a printed
//! command. The decisions they word (who holds the lock, the way out, which values print)
//! are `crate::contention`'s.

use std::fmt;

use crate::contention::{
    state_location, stopped_unlock_commands, unlock_command, way_out, ContentionContext,
    StateLocation, Subject, UnlockCommand, WayOut,
};
use crate::force_unlock::{
    ForceOutcome, ForceUnlockError, ForceUnlockFailures, ForceUnlockLine, Target,
};
use crate::lock::{FlowHolder, LockInfo, TakeoverOf};
use crate::text::{
    display_ident_str, flatten_str, or_unrenderable, printable_str, shell_quote, DEFAULT_CAP,
    STACK_NAME_CAP,
};
use crate::time::iso_timestamp_or_none;
use crate::view::words::expiry_phrase;

/// The `force-unlock` flag that deletes a lock only when it has expired (or is not a
/// readable lock): what a command printed for an expired lock carries, so that run later
/// against a lock taken since, it deletes nothing (docs/state-views.md, "force-unlock [stacks...]").
pub const IF_EXPIRED_FLAG: &str = "--if-expired";

/// The `force-unlock` flag that deletes a lock only when the named cdkd-flow run holds
/// it (docs/state-and-lock.md, "The contention refusal").
pub const RUN_FLAG: &str = "--run";

/// The sentence that replaces the recovery command when it cannot be printed.
pub const NO_RECOVERY_COMMAND: &str = "No recovery command can be shown: a value it needs (the stack name, region, profile, state bucket or state prefix) is unrenderable, empty, longer than 1152 characters, or begins with '-'; inspect the lock object (lock.json) in the state bucket directly.";

const ADVICE_NAMED: &str =
    "That process is still running — wait for it to finish. Only if you are certain it is gone";
const ADVICE_UNNAMED: &str =
    "Wait for it to finish, or if you are certain no other process is active";

/// The start of the advice for a cdkd-flow destroy run's lock.
const DESTROY_ADVICE: &str = "It is a cdkd-flow destroy run: if it is still going, wait for it";

/// What a destroy that lost a stack's lock mid-run says after the `Lost` error
/// (docs/destroy.md, "The lock"): it stopped before writing the record, which therefore still
/// lists what this run deleted since its last write (a destroy run again settles those
/// as already gone); the same destroy is the way on, once nobody else uses the stack (a
/// lock someone holds refuses it, so the advice is safe whenever it is read).
pub const DESTROY_LOCK_LOST: &str = "The destroy stopped before writing the stack's record: the record keeps every resource not confirmed deleted under the lock (a resource this run deleted afterwards is listed still, and a destroy run again settles it as already gone). Once no other process is using the stack, run the same destroy again to finish";

/// The noun of the kind of stack the lock guards.
pub fn noun(subject: Subject) -> &'static str {
    match subject {
        Subject::Stack => "stack",
        Subject::NestedStack => "nested stack",
        Subject::NestedStackChild => "nested-stack child",
    }
}

/// The refusal line (no newline). `lock` is the holder read best-effort (`None`: absent
/// or unreadable, the default text is kept).
pub fn contention_message(ctx: &ContentionContext, lock: Option<&LockInfo>, now_ms: i64) -> String {
    let stack = display_ident_str(ctx.stack, STACK_NAME_CAP);
    let region = match ctx.region {
        Some(r) => format!(" ({})", or_unrenderable(printable_str(r))),
        None => String::new(),
    };
    let head = format!(
        "Could not acquire lock for {} {stack}{region} — {}.",
        noun(ctx.subject),
        held_clause(lock, now_ms)
    );
    let (advice, cmd) = match way_out(ctx, lock) {
        WayOut::Export(run) => return format!("{head} {}", export_advice(&run)),
        WayOut::Destroy(run, cmd) => (destroy_advice(&run), cmd),
        WayOut::Unlock { named, command } => {
            let advice = if named { ADVICE_NAMED } else { ADVICE_UNNAMED };
            (advice.to_string(), command)
        }
    };
    match cmd {
        Some(cmd) => format!("{head} {advice}, run: {cmd}"),
        None => format!("{head} {advice}. {NO_RECOVERY_COMMAND}"),
    }
}

/// What a refusal says of a lock destroy run `run` holds, before the force-unlock
/// command: wait for the run (the command that watches it); only once it has ended,
/// unlock.
fn destroy_advice(run: &FlowHolder) -> String {
    format!(
        "{DESTROY_ADVICE} ({}). Only if you are certain it has ended",
        watch_command(run)
    )
}

/// `cdkd-flow runs watch <run>`, with `--local` for a local run.
fn watch_command(run: &FlowHolder) -> String {
    let local = match run {
        FlowHolder::Local { .. } => " --local",
        FlowHolder::Deployed { .. } => "",
    };
    format!(
        "cdkd-flow runs watch {}{local}",
        display_ident_str(run.run_id(), STACK_NAME_CAP)
    )
}

/// A contention refusal (anywhere in `text`) without its advice: the sentence naming
/// the holder and the expiry stays, what follows it (wait, force-unlock, the recovery
/// command or why none is shown) goes. For the report of a run refused at its lock, read
/// later by people who did not see the run: it advises no force-unlock
/// (docs/notifications.md, "What is published, and when"). An export run's advice (wait for it or resume it, never
/// force-unlock) is kept. Text with no contention advice is returned as it is.
pub fn without_unlock_advice(text: &str) -> String {
    let cut = [
        ADVICE_NAMED,
        ADVICE_UNNAMED,
        DESTROY_ADVICE,
        NO_RECOVERY_COMMAND,
    ]
    .iter()
    .filter_map(|a| text.find(a))
    .min();
    match cut {
        Some(at) => text[..at].trim_end().to_string(),
        None => text.to_string(),
    }
}

/// The cause of a run refused or ended before its report, `<error>: <cause>` flattened
/// onto one line, without a contention refusal's force-unlock advice
/// ([`without_unlock_advice`]).
pub fn refused_cause(error: &str, cause: &str) -> String {
    without_unlock_advice(&format!("{}: {}", flatten_str(error), flatten_str(cause)))
}

/// What a refusal says of a lock export run `run` holds, instead of the force-unlock
/// command: wait for the run (the command that watches it), or resume it.
pub fn export_advice(run: &FlowHolder) -> String {
    format!(
        "It is an export into CloudFormation, which may already hold resources this record lists: if that run is still going, wait for it ({}); if it stopped, run the same cdkd-flow export command again to resume it (it takes the lock over). Do not force-unlock it: a deploy or destroy of the record could then delete resources the CloudFormation stack owns.",
        watch_command(run)
    )
}

/// What stands where a lost lock was (docs/state-and-lock.md, "Renewal"), for the `Lost`
/// error: `present` whether a lock object is there now, `holder` its holder when it is a
/// readable lock. `it was removed (a force-unlock, or by hand)`, `it is held by <owner>[,
/// operation: <op>][, since <when>], <expiry> now`, or an object that is not a lock.
pub fn lost_lock_reason(present: bool, holder: Option<&LockInfo>, now_ms: i64) -> String {
    match (present, holder) {
        (false, _) => "it was removed (a force-unlock, or by hand)".to_string(),
        (true, None) => {
            "another process replaced it with an object that is not a readable lock".to_string()
        }
        (true, Some(lock)) => format!("it is {} now", held_clause(Some(lock), now_ms)),
    }
}

/// Who holds the lock and when it expires: `held by <owner>[, operation: <op>][, since
/// <when>], <expiry>`, an unnamed holder's, or another cdkd process's (`None`).
fn held_clause(lock: Option<&LockInfo>, now_ms: i64) -> String {
    let Some(lock) = lock else {
        return "another cdkd process holds it".to_string();
    };
    let expiry = expiry_phrase(lock.expiry_ms(), now_ms);
    // Owner and operation were flattened when the lock was read; flatten again in case
    // a caller built the LockInfo by hand (idempotent).
    let owner = flatten_str(&lock.owner);
    if owner.is_empty() {
        return format!("held by an unnamed holder, {expiry}");
    }
    let op = lock
        .operation
        .as_deref()
        .map(flatten_str)
        .filter(|op| !op.is_empty())
        .map(|op| format!(", operation: {op}"))
        .unwrap_or_default();
    let since = iso_timestamp_or_none(lock.timestamp.as_ref())
        .map(|t| format!(", since {t}"))
        .unwrap_or_default();
    format!("held by {owner}{op}{since}, {expiry}")
}

/// Why a destroy stopped abruptly (Ctrl-C twice, `runs stop --now`, a time limit) and
/// what then: deletes in flight may still finish (a destroy run again counts them as
/// deleted); the locks it took (`locked`: each stack and its record's region, from its
/// progress; none known when it stopped before its plan was saved) stay held until they
/// expire, or the force-unlock command releases them `after` the run has ended. The
/// command carries `--run <run_id>`, so that, run after someone else took a lock, it
/// deletes nothing (docs/state-and-lock.md, "The contention refusal"); it is printed only when every value
/// prints faithfully (`crate::contention::stopped_unlock_commands`). `again`: the command
/// that runs it again.
pub fn destroy_stopped_cause(
    bucket: &str,
    prefix: &str,
    run_id: &str,
    locked: &[(&str, Option<&str>)],
    cause: &str,
    after: &str,
    again: Option<&str>,
) -> String {
    let again = again
        .map(|c| format!("; then run it again with {c}"))
        .unwrap_or_default();
    if locked.is_empty() {
        return format!(
            "{cause}: it stopped before it saved its plan; any lock it took stays held until it expires (30 minutes after it was taken){again}"
        );
    }
    let (held, them) = if locked.len() == 1 {
        (
            "the lock stays held until it expires (30 minutes after its last renewal)",
            "it",
        )
    } else {
        (
            "the locks stay held until they expire (30 minutes after their last renewal)",
            "them",
        )
    };
    let unlock = stopped_unlock_commands(bucket, prefix, run_id, locked)
        .map(|c| {
            let c: Vec<String> = c.iter().map(ToString::to_string).collect();
            format!(", or {after} {} releases {them}", c.join(" and "))
        })
        .unwrap_or_default();
    format!("{cause}: deletes in flight may still finish; {held}{unlock}{again}")
}

/// `cdkd-flow force-unlock <stacks...> [--stack-region R] [--profile P] [--state-bucket B]
/// [--state-prefix X] [--run <run_id>]`, each value shell-quoted.
impl fmt::Display for UnlockCommand<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cdkd-flow force-unlock")?;
        for stack in &self.stacks {
            write!(f, " {}", shell_quote(stack))?;
        }
        if let Some(region) = self.region {
            write!(f, " --stack-region {}", shell_quote(region))?;
        }
        if let Some(profile) = self.profile {
            write!(f, " --profile {}", shell_quote(profile))?;
        }
        if let Some(bucket) = self.bucket {
            write!(f, " --state-bucket {}", shell_quote(bucket))?;
        }
        if let Some(prefix) = self.prefix {
            write!(f, " --state-prefix {}", shell_quote(prefix))?;
        }
        if let Some(run) = &self.run {
            write!(f, " {RUN_FLAG} {}", shell_quote(run))?;
        }
        Ok(())
    }
}

/// `cdkd-flow force-unlock <stack> [--stack-region R] [--profile P] [--state-bucket B]
/// [--state-prefix X]`, or `None` when any value cannot be reproduced faithfully.
pub fn recovery_command(ctx: &ContentionContext) -> Option<String> {
    unlock_command(ctx, &[ctx.stack], None).map(|c| c.to_string())
}

/// ` --state-bucket B` (and ` --state-prefix P` when not the default).
impl fmt::Display for StateLocation<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, " --state-bucket {}", shell_quote(self.bucket))?;
        if let Some(prefix) = self.prefix {
            write!(f, " --state-prefix {}", shell_quote(prefix))?;
        }
        Ok(())
    }
}

/// ` --state-bucket B` (and ` --state-prefix P` when not the default) for a command a
/// run prints for people whose default bucket may be another one; `None` when a value
/// would not print as itself (`crate::contention::state_location`).
pub fn state_flags(bucket: &str, prefix: &str) -> Option<String> {
    state_location(bucket, prefix).map(|l| l.to_string())
}

/// The warning a takeover logs, of the lock of `previous_owner` at `at` (`<stack>
/// (<region>)`, printable) whose expiry reads `expiry` (`view::words::expiry_phrase`).
pub fn takeover_warning(of: TakeoverOf, at: &str, previous_owner: &str, expiry: &str) -> String {
    let what = match of {
        TakeoverOf::Expired => "an EXPIRED lock",
        TakeoverOf::OwnRun => "this run's own lock",
        TakeoverOf::EndedRun => "the lock of an ended run",
    };
    format!(
        "Took over {what} for stack: {at}, owner: {}, {expiry}",
        flatten_str(previous_owner)
    )
}

/// `<stack> (<region>)` or `<stack> (legacy lock key)`, rendered for a terminal.
fn lock_where(stack: &str, target: &Target) -> String {
    let stack = display_ident_str(stack, STACK_NAME_CAP);
    match target {
        Target::Region(r) => format!("{stack} ({})", display_ident_str(r, DEFAULT_CAP)),
        Target::Legacy => format!("{stack} (legacy lock key)"),
    }
}

/// `<owner>[, operation: <op>]` of a lock as read.
fn lock_holder(i: &LockInfo) -> String {
    let owner = flatten_str(&i.owner);
    let owner = if owner.is_empty() {
        "(unnamed)".to_owned()
    } else {
        owner
    };
    let op = i
        .operation
        .as_deref()
        .map(flatten_str)
        .filter(|o| !o.is_empty())
        .map(|o| format!(", operation: {o}"))
        .unwrap_or_default();
    format!("{owner}{op}")
}

/// What `force-unlock` says of one lock: the line printed, or why it was not released.
impl fmt::Display for ForceUnlockLine<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let where_ = lock_where(self.stack, self.target);
        let was = |i: &Option<&LockInfo>| match i {
            Some(i) => format!("held by {}", lock_holder(i)),
            None => "not a readable lock".to_owned(),
        };
        match &self.outcome {
            ForceOutcome::Held(i) => write!(
                f,
                "Released lock for stack {where_}, owner: {}",
                lock_holder(i)
            ),
            ForceOutcome::Unreadable => {
                write!(f, "Deleted an unreadable lock object for stack {where_}.")
            }
            ForceOutcome::Absent => {
                write!(f, "No lock found for stack {where_}; nothing to release.")
            }
            ForceOutcome::Vanished(i) => write!(
                f,
                "The lock for stack {where_} ({}) was released by its holder before it could be deleted; nothing to release.",
                was(i)
            ),
            ForceOutcome::Changed(i) => write!(
                f,
                "{where_}: the lock changed after it was read (it was {}); nothing was deleted and the newer lock was left in place",
                was(i)
            ),
            ForceOutcome::ExportRun(i) => write!(
                f,
                "{where_}: the lock is held by {}; it was left in place. {}",
                lock_holder(i),
                crate::contention::export_run(i)
                    .map(|run| export_advice(&run))
                    .unwrap_or_default()
            ),
            ForceOutcome::OtherHolder(Some(i)) => write!(
                f,
                "{where_}: the lock is held by {}, not by the run --run names; it was left in place (--run)",
                lock_holder(i)
            ),
            ForceOutcome::OtherHolder(None) => write!(
                f,
                "{where_}: the lock is not a readable lock, so no run can be seen to hold it; it was left in place (--run)"
            ),
            ForceOutcome::Live(i) => write!(
                f,
                "{where_}: the lock is held by {} and {}; it has not expired, so it was left in place (--if-expired)",
                lock_holder(i),
                expiry_phrase(i.expiry_ms(), self.now_ms)
            ),
        }
    }
}

/// `<stack> (<region>): <error>`.
impl fmt::Display for ForceUnlockError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {}",
            lock_where(self.stack, self.target),
            flatten_str(self.error)
        )
    }
}

/// `Could not release <n> lock(s): <line>; <line>`.
impl fmt::Display for ForceUnlockFailures<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Could not release {} lock(s): {}",
            self.0.len(),
            self.0.join("; ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::parse_lock;

    const NOW: i64 = 1_767_225_600_000;

    fn ctx(stack: &str) -> ContentionContext<'_> {
        ContentionContext {
            subject: Subject::Stack,
            stack,
            region: Some("us-east-1"),
            profile: Some("prod"),
            bucket: Some("cdkd-state-111122223333"),
            prefix: "cdkd",
        }
    }

    fn lock(body: &str) -> LockInfo {
        parse_lock(body.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn snapshot_contention_named_holder_with_operation() {
        let l = lock(
            r#"{"owner":"cdkd-flow:run-7","timestamp":1,"expiresAt":1767226325000,"operation":"destroy"}"#,
        );
        insta::assert_snapshot!(contention_message(&ctx("App"), Some(&l), NOW));
    }

    #[test]
    fn snapshot_contention_unnamed_holder_unknown_expiry_nested_child() {
        let l = lock(r#"{"owner":"\u001b\u0007","expiresAt":"soon"}"#);
        let c = ContentionContext {
            subject: Subject::NestedStackChild,
            ..ctx("Root~Child")
        };
        insta::assert_snapshot!(contention_message(&c, Some(&l), NOW));
    }

    #[test]
    fn snapshot_contention_suppressed_command() {
        let c = ContentionContext {
            region: Some("us-east-1\u{2028}"),
            ..ctx("--all")
        };
        insta::assert_snapshot!(contention_message(&c, None, NOW));
    }

    #[test]
    fn no_message_advises_force_unlock_of_another_holders_lock_a_stopped_destroy_names_its_run_and_stacks(
    ) {
        let tree = destroy_stopped_cause(
            "b",
            "cdkd",
            "destroy-Shop-1",
            &[("Shop~Db", Some("eu-west-1")), ("Shop", Some("eu-west-1"))],
            "stopped",
            "once it has ended",
            None,
        );
        assert_eq!(
            tree,
            "stopped: deletes in flight may still finish; the locks stay held until they expire (30 minutes after their last renewal), or once it has ended cdkd-flow force-unlock 'Shop~Db' Shop --stack-region eu-west-1 --state-bucket b --run destroy-Shop-1 releases them"
        );
        // Stopped before its plan was saved: no stack is known to be its, no command.
        let early = destroy_stopped_cause("b", "cdkd", "r1", &[], "stopped", "later", None);
        assert!(!early.contains("force-unlock"), "{early}");
        assert!(
            early.contains("any lock it took stays held until it expires"),
            "{early}"
        );
        // A run id that does not print faithfully: no command at all.
        let odd =
            destroy_stopped_cause("b", "cdkd", "-r", &[("A", None)], "stopped", "later", None);
        assert!(!odd.contains("force-unlock"), "{odd}");
    }

    #[test]
    fn no_message_advises_force_unlock_of_an_export_runs_lock() {
        let lock = crate::lock::parse_lock(
            br#"{"owner":"cdkd-flow:export-Orders-1@box:7","timestamp":1,"expiresAt":1767226325000,"operation":"export"}"#,
        )
        .unwrap()
        .unwrap();
        let ctx = ContentionContext {
            subject: Subject::Stack,
            stack: "Orders",
            region: Some("us-east-1"),
            profile: None,
            bucket: Some("b"),
            prefix: "cdkd",
        };
        let m = contention_message(&ctx, Some(&lock), 0);
        assert!(m.contains("held by cdkd-flow:export-Orders-1@box:7"), "{m}");
        assert!(
            m.contains("run the same cdkd-flow export command again to resume it"),
            "{m}"
        );
        assert!(!m.contains("run: cdkd-flow force-unlock"), "{m}");
        // A destroy run's lock keeps the recovery command.
        let lock = crate::lock::parse_lock(
            br#"{"owner":"cdkd-flow:destroy-Orders-1","timestamp":1,"expiresAt":1767226325000,"operation":"destroy"}"#,
        )
        .unwrap()
        .unwrap();
        assert!(contention_message(&ctx, Some(&lock), 0).contains("run: cdkd-flow force-unlock"));
    }

    #[test]
    fn a_refused_runs_cause_keeps_the_holder_and_drops_the_force_unlock_advice() {
        let l = lock(
            r#"{"owner":"alice@laptop","timestamp":1767225600000,"expiresAt":1767227400000,"operation":"deploy"}"#,
        );
        let full = contention_message(&ctx("App"), Some(&l), NOW);
        assert!(full.contains("cdkd-flow force-unlock App"), "{full}");
        let cut = without_unlock_advice(&format!("LockHeld: {full}; nothing was submitted"));
        assert!(
            cut.starts_with("LockHeld: Could not acquire lock for stack App (us-east-1)"),
            "{cut}"
        );
        assert!(cut.contains("alice@laptop"), "{cut}");
        assert!(
            !cut.contains("force-unlock") && !cut.contains("certain"),
            "{cut}"
        );
        // Unnamed holder, and no command printable: both advices go.
        let unnamed = contention_message(&ctx("App"), None, NOW);
        assert!(!without_unlock_advice(&unnamed).contains("force-unlock"));
        let no_cmd = contention_message(&ctx("-x"), Some(&l), NOW);
        assert!(no_cmd.contains(NO_RECOVERY_COMMAND), "{no_cmd}");
        assert!(!without_unlock_advice(&no_cmd).contains("lock object"));
        // An export run's lock: its advice (wait or resume, never force-unlock) stays.
        let export = lock(
            r#"{"owner":"cdkd-flow:export-App-1","expiresAt":1767227400000,"operation":"export"}"#,
        );
        let ours = contention_message(&ctx("App"), Some(&export), NOW);
        assert_eq!(without_unlock_advice(&ours), ours);
        // Anything else is kept as it is.
        assert_eq!(
            without_unlock_advice("Refused: no record"),
            "Refused: no record"
        );
    }
}
