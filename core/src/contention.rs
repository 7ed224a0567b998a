//! The contention refusal as data and the decisions behind it (docs/state-and-lock.md, "The
//! contention refusal"): who holds a lock ([`export_run`], [`destroy_run`], [`holder_named`]),
//! which way out a refusal names ([`way_out`]), and which values a printed recovery command
//! may carry ([`command_value_ok`], [`unlock_command`], [`stopped_unlock_commands`],
//! [`state_location`]). Nothing here words anything: the one line naming the holder, its
//! operation, since when it holds the lock, when the lock expires and the recovery command
//! (`cdkd-flow force-unlock …`), and every other sentence about a lock, are
//! `core::view::contention`'s.

use crate::keys::DEFAULT_PREFIX;
use crate::lock::{FlowHolder, LockInfo};
use crate::text::{flatten_str, printable_str};

/// Which kind of stack the lock guards (only the noun changes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Stack,
    NestedStack,
    NestedStackChild,
}

/// Everything the refusal names besides the lock.
#[derive(Clone, Copy, Debug)]
pub struct ContentionContext<'a> {
    pub subject: Subject,
    pub stack: &'a str,
    /// `None` for a legacy (region-less) lock.
    pub region: Option<&'a str>,
    pub profile: Option<&'a str>,
    /// The resolved state bucket, when known.
    pub bucket: Option<&'a str>,
    pub prefix: &'a str,
}

/// A contention refusal as data: the lock's context and its holder as read (`None`:
/// absent or unreadable), at `now_ms` on S3's clock. What it says is the one line of
/// `core::view::contention::contention_message`, rendered by the refusal views
/// (`core::view::refusal`).
#[derive(Clone, Debug, PartialEq)]
pub struct Contention {
    pub subject: Subject,
    pub stack: String,
    pub region: Option<String>,
    pub profile: Option<String>,
    pub bucket: Option<String>,
    pub prefix: String,
    pub lock: Option<LockInfo>,
    pub now_ms: i64,
}

impl Contention {
    /// The contention of `ctx` with the holder `lock`, judged at `now_ms`.
    pub fn new(ctx: &ContentionContext, lock: Option<&LockInfo>, now_ms: i64) -> Self {
        Contention {
            subject: ctx.subject,
            stack: ctx.stack.to_string(),
            region: ctx.region.map(str::to_string),
            profile: ctx.profile.map(str::to_string),
            bucket: ctx.bucket.map(str::to_string),
            prefix: ctx.prefix.to_string(),
            lock: lock.cloned(),
            now_ms,
        }
    }

    /// The context it was made from.
    pub fn context(&self) -> ContentionContext<'_> {
        ContentionContext {
            subject: self.subject,
            stack: &self.stack,
            region: self.region.as_deref(),
            profile: self.profile.as_deref(),
            bucket: self.bucket.as_deref(),
            prefix: &self.prefix,
        }
    }
}

/// A lock that refuses a run before it asks anything (the CLI's destroy, before its
/// question): held by another process and unexpired, or unreadable. The way out is the
/// contention's (wait, or the force-unlock command); an unreadable lock names its read
/// error (`error`, as the store said it) after it.
#[derive(Clone, Debug, PartialEq)]
pub enum LockRefusal {
    Held(Contention),
    Unreadable {
        contention: Contention,
        error: String,
    },
}

/// Longest value (in code points) the recovery command may carry.
pub const MAX_COMMAND_VALUE_CHARS: usize = 1152;

/// The longest a `destroy-wave` invocation runs (its function's `Timeout` in
/// `infra/template.yaml`): a stopped destroy's lock may be force-unlocked only after it,
/// when no wave of it can be deleting any more.
pub const WAVE_TIMEOUT_S: u64 = 900;

/// The run holding `lock`, when it is a cdkd-flow destroy run: a refusal names the
/// command that watches it, and only its lock is unlocked (`--run`).
pub fn destroy_run(lock: &LockInfo) -> Option<FlowHolder> {
    (lock.operation.as_deref() == Some("destroy"))
        .then(|| crate::lock::parse_flow_owner(&lock.owner))
        .flatten()
}

/// The run holding `lock`, when it is a cdkd-flow export run: its lock is never
/// force-unlocked without `--abandon-export` (docs/state-and-lock.md, "The contention refusal"), and a refusal
/// advises waiting or resuming instead (`core::view::contention::export_advice`).
pub fn export_run(lock: &LockInfo) -> Option<FlowHolder> {
    (lock.operation.as_deref() == Some("export"))
        .then(|| crate::lock::parse_flow_owner(&lock.owner))
        .flatten()
}

/// Whether `lock` names its holder: its owner, flattened, is not empty. Owner and
/// operation were flattened when the lock was read; flattened again in case a caller
/// built the LockInfo by hand (idempotent).
pub fn holder_named(lock: &LockInfo) -> bool {
    !flatten_str(&lock.owner).is_empty()
}

/// The way out a contention refusal names, after the holder.
#[derive(Clone, Debug, PartialEq)]
pub enum WayOut<'a> {
    /// An export run's lock: CloudFormation may already hold resources its record still
    /// lists, so unlocking (and deploying or destroying) could delete what the stack
    /// owns. The same export command resumes it and takes the lock over
    /// (docs/export.md, "Interrupted and contested runs: resume, refusals, the lock first").
    Export(FlowHolder),
    /// A cdkd-flow destroy run's lock: the run is watched with its own command; the
    /// force-unlock of only that run's lock (`--run`) stays the last resort: run after
    /// another holder took it, it deletes nothing (docs/state-and-lock.md, "The contention
    /// refusal"). `None`: a value of it cannot be printed.
    Destroy(FlowHolder, Option<UnlockCommand<'a>>),
    /// Any other holder: wait for it, or force-unlock. `named`: the holder is named (a
    /// lock read, with an owner); `None`: a value of the command cannot be printed.
    Unlock {
        named: bool,
        command: Option<UnlockCommand<'a>>,
    },
}

/// The way out a refusal of `ctx` names, its holder `lock` read best-effort (`None`:
/// absent or unreadable).
pub fn way_out<'a>(ctx: &ContentionContext<'a>, lock: Option<&LockInfo>) -> WayOut<'a> {
    if let Some(run) = lock.and_then(export_run) {
        return WayOut::Export(run);
    }
    if let Some(run) = lock.and_then(destroy_run) {
        let command = unlock_command(ctx, &[ctx.stack], Some(run.run_id()));
        return WayOut::Destroy(run, command);
    }
    WayOut::Unlock {
        named: lock.is_some_and(holder_named),
        command: unlock_command(ctx, &[ctx.stack], None),
    }
}

/// A `cdkd-flow force-unlock` command whose every value prints as itself: `stacks`
/// (the context's stack first), then `--stack-region`, `--profile`, `--state-bucket`,
/// `--state-prefix` (`None`: left out, the default) and `--run`, each when present.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnlockCommand<'a> {
    pub stacks: Vec<&'a str>,
    pub region: Option<&'a str>,
    pub profile: Option<&'a str>,
    pub bucket: Option<&'a str>,
    /// `Some` when not the default; an empty prefix is a real, different prefix (printed
    /// as `''`).
    pub prefix: Option<&'a str>,
    /// Deletes only locks the cdkd-flow run of this id holds.
    pub run: Option<String>,
}

/// The recovery command of `ctx` for every stack of `stacks` (`ctx.stack` first, all
/// in `ctx.region`; every other field of `ctx`), deleting only locks the cdkd-flow run
/// `run` holds when given; `None` when a value cannot be printed faithfully.
pub fn unlock_command<'a>(
    ctx: &ContentionContext<'a>,
    stacks: &[&'a str],
    run: Option<&str>,
) -> Option<UnlockCommand<'a>> {
    let flat_ok = |v: &str| printable(v, &flatten_str(v));
    if run.is_some_and(|r| !command_value_ok(r)) {
        return None;
    }
    let others = stacks.iter().copied().filter(|s| *s != ctx.stack);
    let stacks: Vec<&str> = std::iter::once(ctx.stack).chain(others).collect();
    if !stacks.iter().all(|s| command_value_ok(s)) {
        return None;
    }
    if ctx.region.is_some_and(|r| !command_value_ok(r)) {
        return None;
    }
    let profile = ctx.profile.filter(|p| !p.is_empty());
    let bucket = ctx.bucket.filter(|b| !b.is_empty());
    if profile.is_some_and(|p| !flat_ok(p)) || bucket.is_some_and(|b| !flat_ok(b)) {
        return None;
    }
    let prefix = (ctx.prefix != DEFAULT_PREFIX).then_some(ctx.prefix);
    if prefix.is_some_and(|p| !p.is_empty() && !flat_ok(p)) {
        return None;
    }
    Some(UnlockCommand {
        stacks,
        region: ctx.region,
        profile,
        bucket,
        prefix,
        run: run.map(str::to_string),
    })
}

/// The force-unlock commands of a stopped destroy run `run_id` for the stacks it
/// locked (`locked`: each stack and its record's region), one per region (a tree's
/// stacks share their root's), each deleting only that run's locks; `None` when a value
/// of any cannot be printed faithfully (docs/state-and-lock.md, "The contention refusal").
pub fn stopped_unlock_commands<'a>(
    bucket: &'a str,
    prefix: &'a str,
    run_id: &str,
    locked: &[(&'a str, Option<&'a str>)],
) -> Option<Vec<UnlockCommand<'a>>> {
    let mut regions: Vec<Option<&str>> = Vec::new();
    for (_, r) in locked {
        if !regions.contains(r) {
            regions.push(*r);
        }
    }
    regions
        .iter()
        .map(|region| {
            let stacks: Vec<&str> = locked
                .iter()
                .filter(|(_, r)| r == region)
                .map(|(s, _)| *s)
                .collect();
            let ctx = ContentionContext {
                subject: Subject::Stack,
                stack: stacks[0],
                region: *region,
                profile: None,
                bucket: Some(bucket),
                prefix,
            };
            unlock_command(&ctx, &stacks, Some(run_id))
        })
        .collect()
}

/// The state bucket and prefix a command a run prints names, for people whose default
/// bucket may be another one: `prefix` is `None` when it is the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateLocation<'a> {
    pub bucket: &'a str,
    pub prefix: Option<&'a str>,
}

/// The state location of `bucket` and `prefix` for a printed command; `None` when a
/// value would not print as itself. Worded (` --state-bucket B[ --state-prefix P]`) by
/// its `Display` (`core::view::contention`).
pub fn state_location<'a>(bucket: &'a str, prefix: &'a str) -> Option<StateLocation<'a>> {
    if !command_value_ok(bucket) {
        return None;
    }
    if prefix == DEFAULT_PREFIX {
        return Some(StateLocation {
            bucket,
            prefix: None,
        });
    }
    (prefix.is_empty() || command_value_ok(prefix)).then_some(StateLocation {
        bucket,
        prefix: Some(prefix),
    })
}

/// A value is printable in the command when sanitising leaves it unchanged and it is
/// non-empty, at most 1152 code points and does not start with `-`.
fn printable(value: &str, sanitised: &str) -> bool {
    value == sanitised
        && !value.is_empty()
        && value.chars().count() <= MAX_COMMAND_VALUE_CHARS
        && !value.starts_with('-')
}

/// A stack name or region that a printed command may carry: sanitising
/// (docs/state-views.md, "Printable (stack names and regions in diagnostics)", Printable) leaves it unchanged, and it is non-empty, at most 1152 code points and does not start
/// with `-` (docs/state-and-lock.md, "The contention refusal").
pub fn command_value_ok(value: &str) -> bool {
    printable(value, &printable_str(value))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lock::parse_lock;

    fn ctx(stack: &str) -> ContentionContext<'_> {
        ContentionContext {
            subject: Subject::Stack,
            stack,
            region: Some("us-east-1"),
            profile: None,
            bucket: Some("b"),
            prefix: DEFAULT_PREFIX,
        }
    }

    fn lock(owner: &str, op: &str) -> LockInfo {
        let body = format!(r#"{{"owner":"{owner}","expiresAt":1,"operation":"{op}"}}"#);
        parse_lock(body.as_bytes()).unwrap().unwrap()
    }

    #[test]
    fn the_way_out_follows_the_holder_and_names_a_command_only_when_it_prints() {
        let export = lock("cdkd-flow:export-App-1", "export");
        assert!(matches!(
            way_out(&ctx("App"), Some(&export)),
            WayOut::Export(run) if run.run_id() == "export-App-1"
        ));
        let destroy = lock("cdkd-flow:destroy-App-1", "destroy");
        let WayOut::Destroy(run, Some(cmd)) = way_out(&ctx("App"), Some(&destroy)) else {
            panic!("a destroy run's lock is the destroy's way out, with its command");
        };
        assert_eq!(run.run_id(), "destroy-App-1");
        assert_eq!(cmd.run.as_deref(), Some("destroy-App-1"));
        assert_eq!(cmd.stacks, ["App"]);
        assert_eq!(cmd.prefix, None);
        let deploy = lock("alice@laptop", "deploy");
        assert!(matches!(
            way_out(&ctx("App"), Some(&deploy)),
            WayOut::Unlock {
                named: true,
                command: Some(UnlockCommand { run: None, .. })
            }
        ));
        assert!(matches!(
            way_out(&ctx("-x"), None),
            WayOut::Unlock {
                named: false,
                command: None
            }
        ));
    }

    #[test]
    fn a_stopped_destroys_commands_are_one_per_region_and_none_when_a_value_does_not_print() {
        let c = stopped_unlock_commands(
            "b",
            "cdkd",
            "r1",
            &[
                ("A", Some("eu-west-1")),
                ("B", None),
                ("C", Some("eu-west-1")),
            ],
        )
        .unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(
            (c[0].stacks.as_slice(), c[0].region),
            (&["A", "C"][..], Some("eu-west-1"))
        );
        assert_eq!((c[1].stacks.as_slice(), c[1].region), (&["B"][..], None));
        assert!(stopped_unlock_commands("b", "cdkd", "-r", &[("A", None)]).is_none());
    }

    #[test]
    fn a_state_location_leaves_out_the_default_prefix_and_refuses_what_does_not_print() {
        assert_eq!(
            state_location("b", DEFAULT_PREFIX),
            Some(StateLocation {
                bucket: "b",
                prefix: None
            })
        );
        assert_eq!(state_location("b", "").and_then(|l| l.prefix), Some(""));
        assert_eq!(state_location("-b", "apps"), None);
        assert_eq!(state_location("b", "-x"), None);
    }
}
