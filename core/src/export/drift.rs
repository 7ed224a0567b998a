//! The drift-baseline warning (docs/export.md, "Drift-baseline warning") and its command-printing rules
//! (docs/export.md, "Commands in that warning"). Non-blocking: it returns the warnings
//! as data, which the plan-warning view words.

use serde_json::Value;

use super::template::{reads_a_parameter, Template};
use super::warning::{PlanWarning, RefreshAdvice, RefreshCommand, RefusedRemedy, ShowCommand};
use crate::state::StateRecord;
use crate::text::{printable_str, DEFAULT_CAP, STACK_NAME_CAP};

/// The record field naming why `cdkd import` refused a baseline; the value
/// [`REFUSED_OVER_PARAMETER`] means a template parameter whose deployed value could not
/// be proved (decision on docs/export.md, "Decisions").
pub const REFUSED_REASON_FIELD: &str = "observedBaselineRefusedReason";
pub const REFUSED_OVER_PARAMETER: &str = "template-parameter";

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
pub fn refresh_observed_command(stack: &str, region: Option<&str>) -> Option<RefreshCommand> {
    let region = region?;
    (renders_exactly(stack, STACK_NAME_CAP) && renders_exactly(region, DEFAULT_CAP)).then(|| {
        RefreshCommand {
            stack: stack.to_string(),
            region: region.to_string(),
        }
    })
}

/// `cdkd-flow state show …` (read-only): printed even when rendering altered the name
/// (it then names the rendered text); withheld only for a name beginning with `-`.
pub fn state_show_command(stack: &str, region: Option<&str>) -> Option<ShowCommand> {
    let name = printable_str(stack);
    if name.is_empty() || stack.starts_with('-') {
        return None;
    }
    let region = region
        .map(printable_str)
        .filter(|r| !r.is_empty() && !r.starts_with('-'));
    Some(ShowCommand { name, region })
}

/// A record's rows, grouped by what its warnings say of them.
#[derive(Default)]
struct Tally {
    malformed: Vec<String>,
    missing: Vec<String>,
    deploy_fixes: Vec<String>,
    param_bound: Vec<String>,
    cannot_tell: Vec<String>,
    /// Well-formed rows.
    total: usize,
}

fn tally(
    rows: &serde_json::Map<String, Value>,
    template: &Template,
    source: TemplateSource,
) -> Tally {
    let mut t = Tally::default();
    for (id, entry) in crate::json::ordered_entries(rows) {
        let typed = entry.as_object().filter(|r| {
            r.get("resourceType")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty())
        });
        let Some(row) = typed else {
            t.malformed.push(id.clone());
            continue;
        };
        t.total += 1;
        if row.get("observedBaselineRefused") == Some(&Value::Bool(true)) {
            let group = match row.get(REFUSED_REASON_FIELD).and_then(Value::as_str) {
                Some(REFUSED_OVER_PARAMETER) => &mut t.param_bound,
                Some(_) => &mut t.deploy_fixes,
                None => match (source, template.resource(id)) {
                    (TemplateSource::Synth, Some(res)) if reads_a_parameter(template, &res) => {
                        &mut t.param_bound
                    }
                    (TemplateSource::Synth, Some(_)) => &mut t.deploy_fixes,
                    _ => &mut t.cannot_tell,
                },
            };
            group.push(id.clone());
        } else if !row.get("observedProperties").is_some_and(Value::is_object) {
            t.missing.push(id.clone());
        }
    }
    t
}

/// What the missing-baselines warning advises for this record.
fn advice(malformed: bool, stack: &str, region: Option<&str>) -> RefreshAdvice {
    let show = state_show_command(stack, region);
    if malformed {
        RefreshAdvice::RepairFirst { show }
    } else if region.is_none() {
        RefreshAdvice::LegacyRecord { show }
    } else if let Some(command) = refresh_observed_command(stack, region) {
        RefreshAdvice::Capture { command }
    } else {
        RefreshAdvice::NoCommand { show }
    }
}

/// The warnings for one record. `stack` and `region` are the key the record was loaded
/// from (`region` `None` for a legacy record), never values stored inside it.
pub fn drift_warnings(
    record: &StateRecord,
    stack: &str,
    region: Option<&str>,
    template: &Template,
    source: TemplateSource,
) -> Vec<PlanWarning> {
    let Some(rows) = super::records::rows(record) else {
        return Vec::new();
    };
    let t = tally(rows, template, source);
    let advice = advice(!t.malformed.is_empty(), stack, region);
    let mut out = Vec::new();
    if !t.malformed.is_empty() {
        out.push(PlanWarning::MalformedRows {
            stack: stack.to_string(),
            ids: t.malformed,
        });
    }
    if !t.missing.is_empty() {
        out.push(if record.version().unwrap_or(1) < 3 {
            PlanWarning::SchemaPredatesBaselines {
                stack: stack.to_string(),
                advice,
            }
        } else {
            PlanWarning::MissingBaselines {
                stack: stack.to_string(),
                missing: t.missing,
                total: t.total,
                advice,
            }
        });
    }
    let refused = [
        (t.deploy_fixes, RefusedRemedy::DeployFixes),
        (t.param_bound, RefusedRemedy::ParameterBound),
        (t.cannot_tell, RefusedRemedy::CannotTell),
    ];
    for (ids, remedy) in refused {
        if !ids.is_empty() {
            out.push(PlanWarning::RefusedBaselines {
                stack: stack.to_string(),
                ids,
                remedy,
            });
        }
    }
    out
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

    /// The warnings' words (the view's), as the tests read them.
    fn drift_warnings(
        record: &StateRecord,
        stack: &str,
        region: Option<&str>,
        template: &Template,
        source: TemplateSource,
    ) -> Vec<String> {
        super::drift_warnings(record, stack, region, template, source)
            .iter()
            .map(ToString::to_string)
            .collect()
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
            state_show_command("App\u{1b}", Some("us-east-1"))
                .map(|c| c.to_string())
                .as_deref(),
            Some("cdkd-flow state show App --stack-region us-east-1")
        );
        assert_eq!(
            refresh_observed_command("Root~Child", Some("us-east-1"))
                .map(|c| c.to_string())
                .as_deref(),
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
