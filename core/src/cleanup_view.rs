//! Renders the scheduled cleanup's result (the cleanup workflow's output) for people.
//! Pure; every value comes from records or AWS and is sanitized for the terminal.

use serde_json::Value;

use crate::text::{flatten, strip};

fn stack_line(v: &Value) -> String {
    let stack = strip(&crate::text::js_string(
        v.get("stack").unwrap_or(&Value::Null),
    ));
    match v.get("stackRegion").and_then(Value::as_str) {
        Some(r) => format!("{stack} ({})", strip(r)),
        None => stack,
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
    let head = if dry {
        "would be destroyed (dry run)"
    } else {
        "selected for destroy"
    };
    lines.push(format!("{} stack(s) {head}", selected.len()));
    lines.extend(selected.iter().map(|s| format!("  {}", stack_line(s))));
    if !skipped.is_empty() {
        lines.push(format!("{} stack(s) skipped", skipped.len()));
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
    let mut s = lines.join("\n");
    s.push('\n');
    s
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
}
