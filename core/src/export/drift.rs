//! The drift-baseline warning (docs/export.md, "Drift-baseline warning") and its command-printing rules
//! (docs/export.md, "Commands in that warning"). Non-blocking: it returns warning lines.

use serde_json::Value;

use super::template::{reads_a_parameter, Template};
use crate::state::StateRecord;
use crate::text::{flatten_str, printable_str, shell_quote, DEFAULT_CAP, STACK_NAME_CAP};

/// The record field naming why `cdkd import` refused a baseline; the value
/// [`REFUSED_OVER_PARAMETER`] means a template parameter whose deployed value could not
/// be proved (decision on docs/export.md, "Decisions").
pub const REFUSED_REASON_FIELD: &str = "observedBaselineRefusedReason";
pub const REFUSED_OVER_PARAMETER: &str = "template-parameter";
/// How many logical ids a list names before "… and N more".
pub const LIST_CAP: usize = 10;

/// Where the template came from: the synthesized app, or `--template` (which cannot
/// tell how the next deploy reads a parameter).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TemplateSource {
    Synth,
    File,
}

/// A value renders exactly: sanitising and the length cap leave it unchanged, it is
/// non-empty, and it does not begin with `-`.
fn renders_exactly(v: &str, cap: usize) -> bool {
    !v.is_empty() && printable_str(v) == v && v.chars().count() <= cap && !v.starts_with('-')
}

/// `cdkd-flow state refresh-observed …` (it writes state): only for a region-scoped
/// record whose stack name and region render exactly as loaded.
pub fn refresh_observed_command(stack: &str, region: Option<&str>) -> Option<String> {
    let region = region?;
    (renders_exactly(stack, STACK_NAME_CAP) && renders_exactly(region, DEFAULT_CAP)).then(|| {
        format!(
            "cdkd-flow state refresh-observed {} --stack-region {}",
            shell_quote(stack),
            shell_quote(region)
        )
    })
}

/// `cdkd-flow state show …` (read-only): printed even when rendering altered the name
/// (it then names the rendered text); withheld only for a name beginning with `-`.
pub fn state_show_command(stack: &str, region: Option<&str>) -> Option<String> {
    let name = printable_str(stack);
    if name.is_empty() || stack.starts_with('-') {
        return None;
    }
    let mut cmd = format!("cdkd-flow state show {}", shell_quote(&name));
    if let Some(r) = region {
        let r = printable_str(r);
        if !r.is_empty() && !r.starts_with('-') {
            cmd.push_str(&format!(" --stack-region {}", shell_quote(&r)));
        }
    }
    Some(cmd)
}

fn listed(ids: &[String]) -> String {
    let mut out: Vec<String> = ids
        .iter()
        .take(LIST_CAP)
        .map(|i| crate::text::or_unrenderable(flatten_str(i)))
        .collect();
    if ids.len() > LIST_CAP {
        out.push(format!("… and {} more", ids.len() - LIST_CAP));
    }
    out.join(", ")
}

/// The warning lines for one record. `stack` and `region` are the key the record was
/// loaded from (`region` `None` for a legacy record), never values stored inside it.
pub fn drift_warnings(
    record: &StateRecord,
    stack: &str,
    region: Option<&str>,
    template: &Template,
    source: TemplateSource,
) -> Vec<String> {
    let Some(rows) = super::records::rows(record) else {
        return Vec::new();
    };
    let shown_stack = crate::text::display_ident_str(stack, STACK_NAME_CAP);
    let mut malformed = Vec::new();
    let mut missing = Vec::new();
    let (mut deploy_fixes, mut param_bound, mut cannot_tell) = (Vec::new(), Vec::new(), Vec::new());
    let mut total = 0usize;
    for (id, entry) in crate::json::ordered_entries(rows) {
        let typed = entry.as_object().filter(|r| {
            r.get("resourceType")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty())
        });
        let Some(row) = typed else {
            malformed.push(id.clone());
            continue;
        };
        total += 1;
        if row.get("observedBaselineRefused") == Some(&Value::Bool(true)) {
            let group = match row.get(REFUSED_REASON_FIELD).and_then(Value::as_str) {
                Some(REFUSED_OVER_PARAMETER) => &mut param_bound,
                Some(_) => &mut deploy_fixes,
                None => match (source, template.resource(id)) {
                    (TemplateSource::Synth, Some(res)) if reads_a_parameter(template, &res) => {
                        &mut param_bound
                    }
                    (TemplateSource::Synth, Some(_)) => &mut deploy_fixes,
                    _ => &mut cannot_tell,
                },
            };
            group.push(id.clone());
        } else if !row.get("observedProperties").is_some_and(Value::is_object) {
            missing.push(id.clone());
        }
    }
    let refresh = refresh_observed_command(stack, region);
    let show = state_show_command(stack, region);
    let show_clause = show
        .map(|c| format!(" Inspect it with: {c}"))
        .unwrap_or_default();
    let refresh_advice = if !malformed.is_empty() {
        format!("repair the record first (cdkd-flow state refresh-observed refuses a record holding such a row), then capture baselines.{show_clause}")
    } else if region.is_none() {
        format!("this is a legacy record with no region: migrate it first (any cdkd write does), then capture baselines with cdkd-flow state refresh-observed.{show_clause}")
    } else if let Some(cmd) = refresh {
        format!("capture them, then run cdkd drift; the capture command: {cmd}")
    } else {
        format!("capture them with cdkd-flow state refresh-observed for this stack (no command is printed: the stack name or region does not render exactly as loaded).{show_clause}")
    };
    let mut out = Vec::new();
    if !malformed.is_empty() {
        out.push(format!(
            "Stack {shown_stack}: {} resources entr(ies) are not objects or carry no resource type, and are left out of the baseline tally: {}.",
            malformed.len(),
            listed(&malformed)
        ));
    }
    if !missing.is_empty() {
        if record.version().unwrap_or(1) < 3 {
            out.push(format!(
                "Stack {shown_stack}: its state schema predates drift baselines; after the export, drift has no baseline to compare against. Deploy once, or {refresh_advice}"
            ));
        } else {
            out.push(format!(
                "Stack {shown_stack}: {} of {total} resource(s) have no drift baseline: {}. {}",
                missing.len(),
                listed(&missing),
                capitalise(&refresh_advice)
            ));
        }
    }
    if !deploy_fixes.is_empty() {
        out.push(format!(
            "Stack {shown_stack}: cdkd import refused the baseline of {}; deploying a change to the resource restores it.",
            listed(&deploy_fixes)
        ));
    }
    if !param_bound.is_empty() {
        out.push(format!(
            "Stack {shown_stack}: cdkd import refused the baseline of {} over a template parameter whose deployed value could not be proved; only replacing the resource, or re-importing it while a CloudFormation stack can prove the value, clears it.",
            listed(&param_bound)
        ));
    }
    if !cannot_tell.is_empty() {
        out.push(format!(
            "Stack {shown_stack}: cdkd import refused the baseline of {}, recorded without its reason; with --template, or for a resource the template no longer defines, the export cannot tell whether deploying a change restores it or only replacing the resource does.",
            listed(&cannot_tell)
        ));
    }
    out
}

fn capitalise(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::parse_state;
    use serde_json::json;

    fn rec(v: Value) -> StateRecord {
        parse_state("App", Some("us-east-1"), v.to_string().as_bytes()).unwrap()
    }

    fn tpl(v: Value) -> Template {
        Template::from_value("App", v).unwrap()
    }

    fn row(baseline: bool) -> Value {
        if baseline {
            json!({"physicalId": "p", "resourceType": "AWS::S3::Bucket", "properties": {}, "observedProperties": {}})
        } else {
            json!({"physicalId": "p", "resourceType": "AWS::S3::Bucket", "properties": {}})
        }
    }

    #[test]
    fn statement_96_v2_record_lacking_baselines_warns_once_that_the_schema_predates_them() {
        let r = rec(json!({"version": 2, "resources": {"A": row(false), "B": row(false)}}));
        let w = drift_warnings(
            &r,
            "App",
            Some("us-east-1"),
            &tpl(json!({})),
            TemplateSource::Synth,
        );
        assert_eq!(w.len(), 1);
        assert!(w[0].contains("predates"), "{}", w[0]);
    }

    #[test]
    fn statement_97_twelve_missing_lists_ten_and_and_2_more() {
        let mut rows = serde_json::Map::new();
        for i in 0..12 {
            rows.insert(format!("R{i:02}"), row(false));
        }
        rows.insert("Ok".into(), row(true));
        let r = rec(json!({"version": 10, "resources": rows}));
        let w = drift_warnings(
            &r,
            "App",
            Some("us-east-1"),
            &tpl(json!({})),
            TemplateSource::Synth,
        );
        assert!(
            w[0].contains("12 of 13") && w[0].contains("R09, … and 2 more"),
            "{}",
            w[0]
        );
        assert!(
            w[0].contains("cdkd-flow state refresh-observed App --stack-region us-east-1"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn statement_98_stack_named_dash_x_gets_no_refresh_command() {
        assert_eq!(refresh_observed_command("-x", Some("us-east-1")), None);
        let r = rec(json!({"version": 10, "resources": {"A": row(false)}}));
        let w = drift_warnings(
            &r,
            "-x",
            Some("us-east-1"),
            &tpl(json!({})),
            TemplateSource::Synth,
        );
        assert!(
            w[0].contains("no command is printed") && !w[0].contains("refresh-observed '-x'"),
            "{}",
            w[0]
        );
    }

    #[test]
    fn statement_99_legacy_record_gets_no_stack_region_and_no_refresh_command() {
        let r = rec(json!({"version": 10, "resources": {"A": row(false)}}));
        let w = drift_warnings(&r, "App", None, &tpl(json!({})), TemplateSource::Synth);
        assert!(w[0].contains("migrate it first"), "{}", w[0]);
        assert!(
            !w[0].contains("--stack-region") && !w[0].contains("refresh-observed App"),
            "{}",
            w[0]
        );
        assert!(w[0].contains("cdkd-flow state show App"), "{}", w[0]);
    }

    #[test]
    fn refresh_command_withheld_when_rendering_alters_name_but_show_is_printed() {
        assert_eq!(
            refresh_observed_command("App\u{1b}", Some("us-east-1")),
            None
        );
        assert_eq!(refresh_observed_command("App", Some("us-east-1\n")), None);
        assert_eq!(
            refresh_observed_command(&"A".repeat(STACK_NAME_CAP + 1), Some("us-east-1")),
            None
        );
        assert_eq!(
            state_show_command("App\u{1b}", Some("us-east-1")).as_deref(),
            Some("cdkd-flow state show App --stack-region us-east-1")
        );
        assert_eq!(
            refresh_observed_command("Root~Child", Some("us-east-1")).as_deref(),
            Some("cdkd-flow state refresh-observed 'Root~Child' --stack-region us-east-1")
        );
    }

    #[test]
    fn malformed_rows_get_their_own_warning_and_leave_the_tally() {
        let r = rec(
            json!({"version": 10, "resources": {"A": null, "B": {"physicalId": "b", "properties": {}}, "C": row(false), "D": row(true)}}),
        );
        let w = drift_warnings(
            &r,
            "App",
            Some("us-east-1"),
            &tpl(json!({})),
            TemplateSource::Synth,
        );
        assert!(w[0].contains("A, B"), "{}", w[0]);
        assert!(
            w[1].contains("1 of 2") && w[1].contains("Repair the record first"),
            "{}",
            w[1]
        );
    }

    #[test]
    fn refused_baselines_are_grouped_by_remedy() {
        let refused = |reason: Option<&str>| {
            let mut v = row(false);
            v["observedBaselineRefused"] = json!(true);
            if let Some(r) = reason {
                v[REFUSED_REASON_FIELD] = json!(r);
            }
            v
        };
        let r = rec(json!({"version": 10, "resources": {
            "Deploy": refused(Some("other")),
            "Param": refused(Some(REFUSED_OVER_PARAMETER)),
            "OldReadsParam": refused(None),
            "OldPlain": refused(None),
            "Gone": refused(None)
        }}));
        let t = tpl(
            json!({"Parameters": {"Env": {"Type": "String"}}, "Resources": {
                "OldReadsParam": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": {"Ref": "Env"}}},
                "OldPlain": {"Type": "AWS::S3::Bucket"}
            }}),
        );
        let w = drift_warnings(&r, "App", Some("us-east-1"), &t, TemplateSource::Synth);
        assert_eq!(w.len(), 3);
        assert!(
            w[0].contains("Deploy, OldPlain") && w[0].contains("deploying a change"),
            "{}",
            w[0]
        );
        assert!(
            w[1].contains("Param, OldReadsParam") && w[1].contains("only replacing"),
            "{}",
            w[1]
        );
        assert!(
            w[2].contains("Gone") && w[2].contains("cannot tell"),
            "{}",
            w[2]
        );
        let w = drift_warnings(&r, "App", Some("us-east-1"), &t, TemplateSource::File);
        assert!(w[2].contains("OldReadsParam, OldPlain, Gone"), "{}", w[2]);
    }
}
