//! The cross-stack consumer scan (docs/export.md, "Cross-stack consumers"): other stacks of the same cloud
//! assembly that read the exported stack's outputs through `Fn::GetStackOutput`. After
//! the export those reads resolve through CloudFormation; the scan warns about them, and
//! with `--strict-cross-stack` refuses. A hit is worded by `core::view::refusal`.

use serde_json::Value;

/// One read of the exported stack's output by another stack.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsumerHit {
    pub consumer: String,
    pub output: String,
    /// Where in the consumer's template: `Resources.X.Properties.Y[0]`.
    pub path: String,
}

/// The `(StackName, OutputName)` of a `Fn::GetStackOutput` value: the object form with
/// string fields, or the legacy two-string array.
fn target_of(v: &Value) -> Option<(&str, &str)> {
    match v {
        Value::Object(m) => Some((
            m.get("StackName")?.as_str()?,
            m.get("OutputName")?.as_str()?,
        )),
        Value::Array(a) if a.len() == 2 => Some((a[0].as_str()?, a[1].as_str()?)),
        _ => None,
    }
}

fn walk(v: &Value, path: &str, stack: &str, consumer: &str, out: &mut Vec<ConsumerHit>) {
    match v {
        Value::Object(m) => {
            if let Some(arg) = m.get("Fn::GetStackOutput") {
                if let Some((s, o)) = target_of(arg) {
                    if s == stack {
                        out.push(ConsumerHit {
                            consumer: consumer.to_string(),
                            output: o.to_string(),
                            path: path.to_string(),
                        });
                    }
                }
            }
            for (k, child) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                walk(child, &p, stack, consumer, out);
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                walk(child, &format!("{path}[{i}]"), stack, consumer, out);
            }
        }
        _ => {}
    }
}

/// Every read of `stack`'s outputs in `others` (name, template), in their order; the
/// exported stack's own template is skipped. The walk goes on inside an intrinsic, so a
/// read nested in another read is found too.
pub fn consumers(stack: &str, others: &[(String, Value)]) -> Vec<ConsumerHit> {
    let mut out = Vec::new();
    for (name, template) in others {
        if name != stack {
            walk(template, "", stack, name, &mut out);
        }
    }
    out
}

/// What a scan that found consumers says: other stacks read the outputs of `stack`
/// (`hits`, in their order). A warning by default: after the export those reads resolve
/// through CloudFormation's outputs of the migrated stack. Its words are the refusal
/// views' (`core::view::refusal`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrossStackReads {
    pub stack: String,
    pub hits: Vec<ConsumerHit>,
}

/// The same reads refused under `--strict-cross-stack`: nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CrossStackRefusal(pub CrossStackReads);

/// The warning (default) or the refusal (`--strict-cross-stack`) of a scan that found
/// consumers; `None` when it found none.
pub fn verdict(
    stack: &str,
    hits: &[ConsumerHit],
    strict: bool,
) -> Option<Result<CrossStackReads, CrossStackRefusal>> {
    if hits.is_empty() {
        return None;
    }
    let reads = CrossStackReads {
        stack: stack.to_string(),
        hits: hits.to_vec(),
    };
    Some(if strict {
        Err(CrossStackRefusal(reads))
    } else {
        Ok(reads)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn others() -> Vec<(String, Value)> {
        vec![
            (
                "App".into(),
                json!({"Outputs": {"X": {"Value": {"Fn::GetStackOutput": {"StackName": "App", "OutputName": "Self"}}}}}),
            ),
            (
                "Web".into(),
                json!({"Resources": {"Fn": {"Type": "AWS::Lambda::Function", "Properties": {
                    "Environment": {"Variables": {"Q": {"Fn::GetStackOutput": {"StackName": "App", "OutputName": "QueueUrl"}}}},
                    "Layers": [{"Fn::Join": ["", [{"Fn::GetStackOutput": ["App", "LayerArn"]}]]}]
                }}}}),
            ),
            (
                "Other".into(),
                json!({"Resources": {"R": {"Properties": {"V": {"Fn::GetStackOutput": {"StackName": "Elsewhere", "OutputName": "O"}}}}}}),
            ),
        ]
    }

    #[test]
    fn statement_73_consumers_are_found_with_their_dotted_path_in_both_forms() {
        let hits = consumers("App", &others());
        let hit = |output: &str, path: &str| ConsumerHit {
            consumer: "Web".into(),
            output: output.into(),
            path: path.into(),
        };
        assert_eq!(
            hits,
            [
                hit(
                    "QueueUrl",
                    "Resources.Fn.Properties.Environment.Variables.Q"
                ),
                hit(
                    "LayerArn",
                    "Resources.Fn.Properties.Layers[0].Fn::Join[1][0]"
                ),
            ]
        );
    }

    #[test]
    fn statement_73_strict_cross_stack_refuses_listing_them_and_the_default_warns() {
        let hits = consumers("App", &others());
        let refused = verdict("App", &hits, true).unwrap().unwrap_err();
        assert_eq!(refused.0.hits, hits);
        let refused = refused.to_string();
        assert!(
            refused.contains(
                "Web \u{2192} App.QueueUrl at Resources.Fn.Properties.Environment.Variables.Q"
            ),
            "{refused}"
        );
        assert!(refused.contains("--strict-cross-stack"));
        let warned = verdict("App", &hits, false).unwrap().unwrap().to_string();
        assert!(
            warned.starts_with("other stacks read the outputs of App"),
            "{warned}"
        );
        assert_eq!(
            verdict("Lonely", &consumers("Lonely", &others()), true),
            None
        );
    }

    #[test]
    fn the_exported_stacks_own_template_and_other_stacks_targets_are_not_consumers() {
        let hits = consumers("App", &others()[..1]);
        assert!(hits.is_empty());
        assert!(consumers("Nobody", &others()).is_empty());
    }
}
