//! The ResourceIdentifier overlay (docs/export.md, "The identifier overlay"): how an identifier value
//! meets the template's current `Properties[field]`. The plan runs the same
//! classification to refuse unrepresentable shapes before anything is written; the
//! import steps apply [`apply_overlay`].

use serde_json::{Map, Value};

/// What the template holds at an overlay field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OverlayClass {
    /// Key absent: left absent.
    Absent,
    /// A non-array object (`Ref`, `Fn::GetAtt`, …): kept.
    Intrinsic,
    /// A plain literal (string, number, boolean, `null`, or a non-empty array of
    /// string/number/boolean): overwritten with the scalar when different.
    Literal { equal: bool, non_string: bool },
    /// Refused, with the shape that makes it so.
    Unrepresentable(Unrepresentable),
}

/// A list the overlay cannot write the identifier's scalar over (its words, why, are
/// the blocked-row view's, `core::view::blocked`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unrepresentable {
    /// Nothing to reconcile, and cdkd-flow will not invent a value.
    EmptyList,
    /// Rewriting it would discard the intrinsic it holds.
    ListWithObject,
    /// It cannot be expressed as the declared scalar.
    ListWithListOrNull,
}

/// A field of a row whose template value the overlay refuses: the row, the field, what
/// the template holds there, the identifier's scalar, and the shape that refuses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverlayRefusal {
    pub logical_id: String,
    pub resource_type: String,
    pub field: String,
    pub current: Value,
    pub value: String,
    pub shape: Unrepresentable,
}

/// Classifies `current` against the identifier `value` (a string).
pub fn classify(current: Option<&Value>, value: &str) -> OverlayClass {
    let scalar_eq = |v: &Value| v.as_str() == Some(value);
    match current {
        None => OverlayClass::Absent,
        Some(Value::Object(_)) => OverlayClass::Intrinsic,
        Some(Value::Array(items)) => {
            if items.is_empty() {
                OverlayClass::Unrepresentable(Unrepresentable::EmptyList)
            } else if items.iter().any(Value::is_object) {
                OverlayClass::Unrepresentable(Unrepresentable::ListWithObject)
            } else if items.iter().any(|v| v.is_array() || v.is_null()) {
                OverlayClass::Unrepresentable(Unrepresentable::ListWithListOrNull)
            } else {
                OverlayClass::Literal {
                    equal: false,
                    non_string: true,
                }
            }
        }
        Some(v) => OverlayClass::Literal {
            equal: scalar_eq(v),
            non_string: !v.is_string(),
        },
    }
}

/// The plan-time check of one row: one refusal per offending field.
pub fn refusals(
    logical_id: &str,
    resource_type: &str,
    properties: Option<&Map<String, Value>>,
    identifier: &Map<String, Value>,
    fields: &[String],
) -> Vec<OverlayRefusal> {
    fields
        .iter()
        .filter_map(|f| {
            let value = identifier.get(f)?.as_str()?;
            let current = properties.and_then(|p| p.get(f));
            match classify(current, value) {
                OverlayClass::Unrepresentable(shape) => Some(OverlayRefusal {
                    logical_id: logical_id.to_string(),
                    resource_type: resource_type.to_string(),
                    field: f.clone(),
                    current: current.cloned().unwrap_or(Value::Null),
                    value: value.to_string(),
                    shape,
                }),
                _ => None,
            }
        })
        .collect()
}

/// A non-string literal the overlay rewrote at `Properties.<field>` of `logical_id`
/// (it was `was`) with the identifier's scalar `value`: the plan warns of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScalarRewrite {
    pub logical_id: String,
    pub field: String,
    pub was: Value,
    pub value: String,
}

/// Applies the overlay to a copy of `Properties` (a missing or non-object `Properties`
/// becomes `{}`); returns the new properties and one [`ScalarRewrite`] per non-string
/// literal rewritten. Unrepresentable shapes are left untouched (the plan already refused them).
pub fn apply_overlay(
    logical_id: &str,
    properties: Option<&Value>,
    identifier: &Map<String, Value>,
    fields: &[String],
) -> (Map<String, Value>, Vec<ScalarRewrite>) {
    let mut props = properties
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut warnings = Vec::new();
    for f in fields {
        let Some(value) = identifier.get(f).and_then(Value::as_str) else {
            continue;
        };
        if let OverlayClass::Literal {
            equal: false,
            non_string,
        } = classify(props.get(f), value)
        {
            if non_string {
                warnings.push(ScalarRewrite {
                    logical_id: logical_id.to_string(),
                    field: f.clone(),
                    was: props[f.as_str()].clone(),
                    value: value.to_string(),
                });
            }
            props.insert(f.clone(), Value::String(value.to_string()));
        }
    }
    (props, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ident(k: &str, v: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert(k.into(), json!(v));
        m
    }

    #[test]
    fn statement_55_absent_field_stays_absent() {
        let (p, w) = apply_overlay(
            "B",
            Some(&json!({"Tags": []})),
            &ident("BucketName", "b-1"),
            &["BucketName".into()],
        );
        assert!(!p.contains_key("BucketName") && w.is_empty());
        let (p, _) = apply_overlay(
            "B",
            None,
            &ident("BucketName", "b-1"),
            &["BucketName".into()],
        );
        assert!(p.is_empty());
    }

    #[test]
    fn statement_56_literal_name_is_overwritten_with_the_identifier() {
        let (p, w) = apply_overlay(
            "R",
            Some(&json!({"RoleName": "foo"})),
            &ident("RoleName", "Stack-foo"),
            &["RoleName".into()],
        );
        assert_eq!(p["RoleName"], "Stack-foo");
        assert!(w.is_empty());
    }

    #[test]
    fn statement_57_single_element_list_becomes_the_scalar_with_one_warning() {
        let (p, w) = apply_overlay(
            "N",
            Some(&json!({"Namespace": ["analytics"]})),
            &ident("Namespace", "analytics"),
            &["Namespace".into()],
        );
        assert_eq!(p["Namespace"], "analytics");
        assert_eq!(w.len(), 1);
    }

    #[test]
    fn statement_58_unrepresentable_shapes_block_and_only_the_object_case_names_an_intrinsic() {
        let cases = [
            (json!([]), Unrepresentable::EmptyList),
            (json!([["a"]]), Unrepresentable::ListWithListOrNull),
            (json!([null]), Unrepresentable::ListWithListOrNull),
            (json!([{"Ref": "X"}]), Unrepresentable::ListWithObject),
        ];
        for (v, shape) in cases {
            let props = json!({"Namespace": v});
            let r = refusals(
                "N",
                "AWS::S3Tables::Namespace",
                props.as_object(),
                &ident("Namespace", "analytics"),
                &["Namespace".into()],
            );
            assert_eq!(r.len(), 1);
            assert_eq!(r[0].shape, shape);
            let words = r[0].to_string();
            assert!(words.contains(&shape.to_string()), "{words}");
            assert_eq!(
                words.contains("intrinsic"),
                shape == Unrepresentable::ListWithObject,
                "{words}"
            );
        }
    }

    #[test]
    fn statement_59_intrinsic_is_kept() {
        let (p, _) = apply_overlay(
            "I",
            Some(&json!({"ApiId": {"Ref": "HttpApi"}})),
            &ident("ApiId", "a1"),
            &["ApiId".into()],
        );
        assert_eq!(p["ApiId"], json!({"Ref": "HttpApi"}));
        assert_eq!(
            classify(Some(&json!({"Ref": "X"})), "a"),
            OverlayClass::Intrinsic
        );
    }

    #[test]
    fn overlay_null_and_number_literals_are_overwritten_with_a_warning() {
        let (p, w) = apply_overlay(
            "Q",
            Some(&json!({"N": 5, "M": null})),
            &{
                let mut m = ident("N", "5");
                m.insert("M".into(), json!("m"));
                m
            },
            &["N".into(), "M".into()],
        );
        assert_eq!(p["N"], "5");
        assert_eq!(p["M"], "m");
        assert_eq!(w.len(), 2);
    }
}
