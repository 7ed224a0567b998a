//! The CloudFormation template model (docs/export.md, "Classifying a stack's resources" and "Child templates" and "Parameters"): a template is kept
//! as the parsed JSON object (insertion ordered, nothing dropped) and read field by
//! field. YAML is turned into JSON by the caller before it reaches core.

use serde_json::{Map, Value};

/// `AWS::CDK::Metadata`.
pub const CDK_METADATA: &str = "AWS::CDK::Metadata";
/// A nested stack resource.
pub const NESTED_STACK: &str = crate::state::NESTED_STACK_TYPE;
/// The metadata key naming a nested stack's template file in the cloud assembly.
pub const ASSET_PATH_KEY: &str = "aws:asset:path";

/// A template the export can read.
#[derive(Clone, Debug)]
pub struct Template {
    pub body: Map<String, Value>,
}

/// A template export cannot read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    NotAnObject { stack: String, kind: &'static str },
    BadResources { stack: String, kind: &'static str },
}

impl std::error::Error for TemplateError {}

/// One resource of `Resources` that has an object body and a string `Type`.
#[derive(Clone, Copy, Debug)]
pub struct TemplateResource<'a> {
    pub logical_id: &'a str,
    pub resource_type: &'a str,
    pub body: &'a Map<String, Value>,
}

impl<'a> TemplateResource<'a> {
    /// `Properties` when it is an object.
    pub fn properties(&self) -> Option<&'a Map<String, Value>> {
        self.body.get("Properties").and_then(Value::as_object)
    }

    /// `Properties[field]`.
    pub fn property(&self, field: &str) -> Option<&'a Value> {
        self.properties().and_then(|p| p.get(field))
    }

    /// `Metadata['aws:asset:path']` when it is a string.
    pub fn asset_path(&self) -> Option<&'a str> {
        self.body
            .get("Metadata")
            .and_then(Value::as_object)
            .and_then(|m| m.get(ASSET_PATH_KEY))
            .and_then(Value::as_str)
    }

    pub fn is_nested_stack(&self) -> bool {
        self.resource_type == NESTED_STACK
    }
}

/// One declared parameter (docs/export.md, "Parameters").
#[derive(Clone, Debug, PartialEq)]
pub struct ParameterDecl<'a> {
    pub name: &'a str,
    /// `Type`, `String` when absent or not a string.
    pub param_type: &'a str,
    pub default: Option<&'a Value>,
    pub no_echo: bool,
}

impl ParameterDecl<'_> {
    /// `AWS::SSM::Parameter::Value<…>`: the submitted value is an SSM parameter's name.
    pub fn is_ssm(&self) -> bool {
        self.param_type.starts_with("AWS::SSM::Parameter::Value<")
    }

    /// A list type (`List<…>`, `CommaDelimitedList`, or an SSM list type): a `Ref` to it
    /// is a list inside an intrinsic.
    pub fn is_list(&self) -> bool {
        let inner = self
            .param_type
            .strip_prefix("AWS::SSM::Parameter::Value<")
            .and_then(|t| t.strip_suffix('>'))
            .unwrap_or(self.param_type);
        inner.starts_with("List<") || inner == "CommaDelimitedList"
    }
}

impl Template {
    /// Reads a parsed template: the root must be an object, and `Resources`, when
    /// present, an object.
    pub fn from_value(stack: &str, value: Value) -> Result<Self, TemplateError> {
        let shown = crate::text::display_ident_str(stack, crate::text::STACK_NAME_CAP);
        let body = match value {
            Value::Object(m) => m,
            other => {
                return Err(TemplateError::NotAnObject {
                    stack: shown,
                    kind: crate::state::kind_of(&other),
                })
            }
        };
        match body.get("Resources") {
            None | Some(Value::Object(_)) => Ok(Template { body }),
            Some(other) => Err(TemplateError::BadResources {
                stack: shown,
                kind: crate::state::kind_of(other),
            }),
        }
    }

    fn section(&self, name: &str) -> Option<&Map<String, Value>> {
        self.body.get(name).and_then(Value::as_object)
    }

    /// Every resource in template order; entries that are not objects or have no string
    /// `Type` are skipped (docs/export.md, "Classifying a stack's resources").
    pub fn resources(&self) -> Vec<TemplateResource<'_>> {
        let Some(res) = self.section("Resources") else {
            return Vec::new();
        };
        res.iter()
            .filter_map(|(id, v)| {
                let body = v.as_object()?;
                let resource_type = body.get("Type")?.as_str()?;
                Some(TemplateResource {
                    logical_id: id,
                    resource_type,
                    body,
                })
            })
            .collect()
    }

    pub fn resource(&self, logical_id: &str) -> Option<TemplateResource<'_>> {
        self.resources()
            .into_iter()
            .find(|r| r.logical_id == logical_id)
    }

    /// Declared parameters in template order (non-object declarations are skipped).
    pub fn parameters(&self) -> Vec<ParameterDecl<'_>> {
        let Some(params) = self.section("Parameters") else {
            return Vec::new();
        };
        params
            .iter()
            .filter_map(|(name, v)| {
                let decl = v.as_object()?;
                Some(ParameterDecl {
                    name,
                    param_type: decl.get("Type").and_then(Value::as_str).unwrap_or("String"),
                    default: decl.get("Default"),
                    no_echo: match decl.get("NoEcho") {
                        Some(Value::Bool(b)) => *b,
                        Some(Value::String(s)) => s.eq_ignore_ascii_case("true"),
                        _ => false,
                    },
                })
            })
            .collect()
    }

    /// True when the template has a `Parameters` section at all.
    pub fn has_parameters_section(&self) -> bool {
        self.body.contains_key("Parameters")
    }

    pub fn parameter(&self, name: &str) -> Option<ParameterDecl<'_>> {
        self.parameters().into_iter().find(|p| p.name == name)
    }

    pub fn outputs(&self) -> Option<&Map<String, Value>> {
        self.section("Outputs")
    }

    pub fn conditions(&self) -> Option<&Map<String, Value>> {
        self.section("Conditions")
    }

    /// Nested-stack resources in template order.
    pub fn nested_stacks(&self) -> Vec<TemplateResource<'_>> {
        self.resources()
            .into_iter()
            .filter(|r| r.is_nested_stack())
            .collect()
    }
}

/// Does `value` mention `{"Ref": name}` anywhere (also inside `Fn::Sub` strings as
/// `${name}`)? Used to tell whether a resource reads a template parameter.
pub fn mentions_ref(value: &Value, name: &str) -> bool {
    match value {
        Value::Object(m) => {
            if m.len() == 1 {
                if let Some(Value::String(r)) = m.get("Ref") {
                    if r == name {
                        return true;
                    }
                }
                if let Some(sub) = m.get("Fn::Sub") {
                    let text = match sub {
                        Value::String(s) => Some(s.as_str()),
                        Value::Array(a) => a.first().and_then(Value::as_str),
                        _ => None,
                    };
                    if text.is_some_and(|t| t.contains(&format!("${{{name}}}"))) {
                        return true;
                    }
                }
            }
            m.values().any(|v| mentions_ref(v, name))
        }
        Value::Array(a) => a.iter().any(|v| mentions_ref(v, name)),
        _ => false,
    }
}

/// True when the resource's body reads any parameter the template declares.
pub fn reads_a_parameter(template: &Template, resource: &TemplateResource<'_>) -> bool {
    let body = Value::Object(resource.body.clone());
    template
        .parameters()
        .iter()
        .any(|p| mentions_ref(&body, p.name))
}

/// A nested stack row whose `Metadata['aws:asset:path']` is absolute: refused, naming
/// the row (its words are `core::view::export_input`'s).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AbsoluteAssetPath {
    pub logical_id: String,
}

/// The child template's path relative to its parent template's directory, from
/// `Metadata['aws:asset:path']` (docs/export.md, "Child templates"). `Ok(None)` when the row carries
/// none; an absolute path is refused.
pub fn child_template_path<'a>(
    resource: &TemplateResource<'a>,
) -> Result<Option<&'a str>, AbsoluteAssetPath> {
    match resource.asset_path() {
        None => Ok(None),
        Some(p) if p.starts_with('/') || p.starts_with('\\') || p.get(1..3) == Some(":\\") => {
            Err(AbsoluteAssetPath {
                logical_id: resource.logical_id.to_string(),
            })
        }
        Some(p) => Ok(Some(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn t(v: Value) -> Template {
        Template::from_value("App", v).unwrap()
    }

    #[test]
    fn template_resources_skip_non_objects_and_untyped_entries_in_template_order() {
        let tpl = t(json!({"Resources": {
            "B": {"Type": "AWS::S3::Bucket"},
            "Bad": 3,
            "NoType": {"Properties": {}},
            "A": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "q"}}
        }}));
        let ids: Vec<_> = tpl.resources().iter().map(|r| r.logical_id).collect();
        assert_eq!(ids, ["B", "A"]);
        assert_eq!(
            tpl.resource("A").unwrap().property("QueueName"),
            Some(&json!("q"))
        );
    }

    #[test]
    fn template_refuses_a_non_object_root_or_resources() {
        assert!(matches!(
            Template::from_value("App", json!([])),
            Err(TemplateError::NotAnObject {
                kind: "an array",
                ..
            })
        ));
        assert!(Template::from_value("App", json!({"Resources": "x"})).is_err());
    }

    #[test]
    fn template_parameters_types_defaults_noecho_ssm_and_list() {
        let tpl = t(json!({"Parameters": {
            "S": {"Type": "AWS::SSM::Parameter::Value<String>", "Default": "/app/name"},
            "L": {"Type": "AWS::SSM::Parameter::Value<List<String>>"},
            "C": {"Type": "CommaDelimitedList", "Default": "a,b"},
            "P": {"Type": "String", "NoEcho": true},
            "Q": {"NoEcho": "true"}
        }, "Resources": {}}));
        let ps = tpl.parameters();
        assert!(ps[0].is_ssm() && !ps[0].is_list());
        assert!(ps[1].is_ssm() && ps[1].is_list());
        assert!(!ps[2].is_ssm() && ps[2].is_list());
        assert!(ps[3].no_echo && ps[4].no_echo);
        assert_eq!(ps[4].param_type, "String");
    }

    #[test]
    fn nested_stack_child_template_path_relative_only() {
        let tpl = t(json!({"Resources": {
            "Child": {"Type": "AWS::CloudFormation::Stack",
                      "Metadata": {"aws:asset:path": "RootChild.nested.template.json"}},
            "Abs": {"Type": "AWS::CloudFormation::Stack",
                    "Metadata": {"aws:asset:path": "/tmp/x.json"}},
            "None": {"Type": "AWS::CloudFormation::Stack"}
        }}));
        let nested = tpl.nested_stacks();
        assert_eq!(nested.len(), 3);
        assert_eq!(
            child_template_path(&nested[0]),
            Ok(Some("RootChild.nested.template.json"))
        );
        assert!(child_template_path(&nested[1]).is_err());
        assert_eq!(child_template_path(&nested[2]), Ok(None));
    }

    #[test]
    fn reads_a_parameter_sees_ref_and_sub() {
        let tpl = t(
            json!({"Parameters": {"Env": {"Type": "String"}}, "Resources": {
                "A": {"Type": "T", "Properties": {"N": {"Ref": "Env"}}},
                "B": {"Type": "T", "Properties": {"N": {"Fn::Sub": "x-${Env}"}}},
                "C": {"Type": "T", "Properties": {"N": "Env"}}
            }}),
        );
        let rs = tpl.resources();
        assert!(reads_a_parameter(&tpl, &rs[0]));
        assert!(reads_a_parameter(&tpl, &rs[1]));
        assert!(!reads_a_parameter(&tpl, &rs[2]));
        assert!(tpl.outputs().is_none() && tpl.conditions().is_none());
    }
}
