//! The scheduled cleanup's result (the cleanup workflow's output) for people. Pure;
//! every value comes from records or AWS and is sanitized for the terminal.

use serde_json::Value;

use crate::text::{flatten, js_string, or_unrenderable, strip};
use crate::view::join_lines;
use crate::view::words::{count, stack_region};

fn stack_line(v: &Value) -> String {
    let stack = js_string(v.get("stack").unwrap_or(&Value::Null));
    match v.get("stackRegion").and_then(Value::as_str) {
        Some(r) => stack_region(&stack, r),
        None => or_unrenderable(strip(&stack)),
    }
}

fn list(v: &Value, key: &str) -> Vec<Value> {
    v.get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
}

/// One block per list: what was selected (or would be, on a dry run), what was skipped
/// and why, what was destroyed and what failed with its error.
pub fn render_cleanup(out: &Value) -> String {
    let dry = out.get("dryRun").and_then(Value::as_bool).unwrap_or(false);
    let selected = list(out, "selected");
    let skipped = list(out, "skipped");
    let mut lines = Vec::new();
    // A cleanup that could not finish (its `Failed` state): what broke, then the lists
    // as far as it got.
    if let Some(e) = out.get("error").filter(|e| !e.is_null()) {
        lines.push(format!(
            "cleanup failed: {}: {}",
            flatten(Some(e)),
            crate::notify::cap_chars(&flatten(out.get("cause")))
        ));
    }
    let head = if dry {
        "would be destroyed (dry run)"
    } else {
        "selected for destroy"
    };
    lines.push(format!("{} {head}", count(selected.len() as u64, "stack")));
    lines.extend(selected.iter().map(|s| format!("  {}", stack_line(s))));
    if !skipped.is_empty() {
        lines.push(format!("{} skipped", count(skipped.len() as u64, "stack")));
        lines.extend(
            skipped
                .iter()
                .map(|s| format!("  {}: {}", stack_line(s), flatten(s.get("reason")))),
        );
    }
    if !dry {
        let ok = list(out, "succeeded");
        let failed = list(out, "failed");
        lines.push(format!("{} destroyed, {} failed", ok.len(), failed.len()));
        lines.extend(ok.iter().map(|s| format!("  destroyed {}", stack_line(s))));
        lines.extend(failed.iter().map(|s| {
            format!(
                "  failed {}: {}: {}",
                stack_line(s),
                flatten(s.get("error")),
                flatten(s.get("cause"))
            )
        }));
    }
    join_lines(&lines)
}

/// The failure line of a cleanup in which some destroys failed (stderr, exit 1), `None`
/// when none did: `error: cleanup: <n> stack(s) failed to be destroyed; see the summary`.
pub fn cleanup_failure_line(out: &Value) -> Option<String> {
    let failed = list(out, "failed").len() as u64;
    let failed = failed.max(out.get("failedCount").and_then(Value::as_u64).unwrap_or(0));
    (failed > 0).then(|| {
        crate::view::error_line(&format!(
            "cleanup: {} failed to be destroyed; see the summary",
            count(failed, "stack")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cleanup_dry_run_lists_the_selection_and_the_skipped_with_reasons() {
        let out = json!({"dryRun": true,
            "selected": [{"stack": "Preview-42", "stackRegion": "us-east-1", "stateBucket": "b"}],
            "skipped": [{"stack": "Prod", "stackRegion": "us-east-1", "reason": "pattern-mismatch"},
                        {"stack": "Preview-7\u{1b}[2J", "stackRegion": "us-east-1", "reason": "locked"}]});
        insta::assert_snapshot!(render_cleanup(&out));
    }

    #[test]
    fn cleanup_run_names_what_was_destroyed_and_what_failed_on_one_line() {
        let out = json!({"dryRun": false,
            "selected": [{"stack": "A", "stackRegion": "us-east-1"}, {"stack": "B", "stackRegion": "eu-west-1"}],
            "skipped": [],
            "succeeded": [{"stack": "A", "stackRegion": "us-east-1", "status": "SUCCEEDED"}],
            "failed": [{"stack": "B", "stackRegion": "eu-west-1", "status": "FAILED", "error": "LockHeld", "cause": "held by\nbob"}]});
        let text = render_cleanup(&out);
        assert!(!text.contains("held by\nbob"));
        insta::assert_snapshot!(text);
    }

    #[test]
    fn cleanup_counts_say_one_stack_two_stacks() {
        // Counts are words, as in every cdkd-flow view: `1 stack`, `2 stacks`.
        let out = json!({"dryRun": true,
            "selected": [{"stack": "A", "stackRegion": "us-east-1"}],
            "skipped": [{"stack": "B", "stackRegion": "us-east-1", "reason": "locked"},
                        {"stack": "C", "stackRegion": "us-east-1", "reason": "locked"}]});
        let text = render_cleanup(&out);
        assert!(
            text.starts_with("1 stack would be destroyed (dry run)\n"),
            "{text}"
        );
        assert!(text.contains("\n2 stacks skipped\n"), "{text}");
        assert!(!text.contains("(s)"), "{text}");
    }

    #[test]
    fn cleanup_failure_line_begins_with_error_when_a_destroy_failed() {
        assert_eq!(
            cleanup_failure_line(&json!({"failed": [], "failedCount": 0})),
            None
        );
        assert_eq!(
            cleanup_failure_line(&json!({"failed": [{"stack": "A"}], "failedCount": 1})).as_deref(),
            Some("error: cleanup: 1 stack failed to be destroyed; see the summary")
        );
    }
}
