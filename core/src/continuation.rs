//! Continuing a long run in a new execution (docs/runs.md, "Continuing in a new
//! execution"): when a run's loop continues, how its executions are named, and how a
//! watcher recognises an execution that handed its run over.

use serde_json::Value;

/// Step Functions' limit on a Standard execution's history ("Maximum execution history
/// size", Step Functions service quotas).
pub const MAX_HISTORY_EVENTS: u64 = 25_000;

/// The environment variable that lowers the limit (a test setting, docs/testing.md).
pub const HISTORY_LIMIT_ENV: &str = "CDKD_FLOW_HISTORY_LIMIT";

/// The events one turn of a loop may cost: a Task's 5 (entered, scheduled, started,
/// succeeded, exited), a Choice's 2, a Wait's 2, and 3 to spare for a retried attempt
/// (failed, scheduled, started).
pub const EVENTS_PER_LOOP: u64 = 12;

/// The history limit a setting of `raw` (the environment variable's value) stands for:
/// a number of at least 10, else Step Functions' own.
pub fn history_limit(raw: Option<&str>) -> u64 {
    raw.and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|n| *n >= 10)
        .unwrap_or(MAX_HISTORY_EVENTS)
}

/// How many turns an execution's loop runs before the run continues in a new execution:
/// what is left of `history_limit` once a tenth (at least 60 events) is kept for the
/// states before and after the loop, at [`EVENTS_PER_LOOP`] a turn; at least 1.
/// 25,000 events: 1,875 turns.
pub fn loops_before_continuing(history_limit: u64) -> u32 {
    let reserve = (history_limit / 10).max(60);
    let turns = history_limit.saturating_sub(reserve) / EVENTS_PER_LOOP;
    u32::try_from(turns.max(1)).unwrap_or(u32::MAX)
}

/// Whether the loop's `loops`-th turn of this execution, which left the run unsettled,
/// hands the run to a new execution.
pub fn continues(loops: u32, settled: bool, history_limit: u64) -> bool {
    !settled && loops >= loops_before_continuing(history_limit)
}

/// Step Functions' longest execution name.
const MAX_NAME: usize = 80;

/// The name of a run's `execution`-th execution (2 and on; the first is the run id):
/// `<run id>--<n>`, the run id cut so that the name fits in 80 characters.
pub fn execution_name(run_id: &str, execution: u32) -> String {
    let suffix = format!("--{execution}");
    let room = MAX_NAME.saturating_sub(suffix.len());
    let head: String = run_id.chars().take(room).collect();
    format!("{head}{suffix}")
}

/// The name of the execution the execution `execution` hands its run over to, given the
/// continuation the run's `progress.json` records (`recorded`): the one recorded when it
/// is not `execution` itself (a retry of the step after its write names the same one),
/// else the next of `execution`'s chain (`run`, `run--2`, `run--3`, ...; a run resumed
/// in an execution of another name continues in that name's chain).
pub fn next_execution(recorded: Option<&str>, execution: &str) -> String {
    match recorded {
        Some(next) if !next.is_empty() && next != execution => next.to_string(),
        _ => {
            let (first, n) = run_of_execution(execution);
            execution_name(first, n.saturating_add(1))
        }
    }
}

/// The execution an execution's output names as its run's continuation
/// (`{"continuedAs": "<name>"}`).
pub fn continued_as(output: &Value) -> Option<&str> {
    output
        .get("continuedAs")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The run id and the execution number of an execution name made by
/// [`execution_name`] (`run--3` gives `("run", 3)`); a run's first execution is its run id
/// (number 1).
pub fn run_of_execution(name: &str) -> (&str, u32) {
    if let Some((run, n)) = name.rsplit_once("--") {
        if let Ok(n) = n.parse::<u32>() {
            if n >= 2 && !run.is_empty() {
                return (run, n);
            }
        }
    }
    (name, 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn turns_before_continuing() {
        assert_eq!(loops_before_continuing(25_000), 1_875);
        assert_eq!(loops_before_continuing(120), 5);
        assert_eq!(loops_before_continuing(10), 1);
        assert!(!continues(4, false, 120));
        assert!(continues(5, false, 120));
        assert!(!continues(5, true, 120));
    }

    #[test]
    fn the_setting() {
        assert_eq!(history_limit(None), 25_000);
        assert_eq!(history_limit(Some(" 150 ")), 150);
        assert_eq!(history_limit(Some("5")), 25_000);
        assert_eq!(history_limit(Some("x")), 25_000);
    }

    #[test]
    fn names() {
        assert_eq!(
            execution_name("destroy-Shop-20260101T000000", 2),
            "destroy-Shop-20260101T000000--2"
        );
        let long = "r".repeat(100);
        assert_eq!(execution_name(&long, 12).len(), 80);
        assert_eq!(run_of_execution("destroy-Shop--3"), ("destroy-Shop", 3));
        assert_eq!(run_of_execution("destroy-Shop"), ("destroy-Shop", 1));
        assert_eq!(run_of_execution("a--1"), ("a--1", 1));
        assert_eq!(continued_as(&json!({"continuedAs": "x--2"})), Some("x--2"));
        assert_eq!(next_execution(None, "run"), "run--2");
        assert_eq!(next_execution(Some("run--2"), "run--2"), "run--3");
        assert_eq!(next_execution(Some("run--3"), "run--2"), "run--3");
        assert_eq!(next_execution(Some("run--2"), "run"), "run--2");
        assert_eq!(continued_as(&json!({"complete": true})), None);
    }
}
