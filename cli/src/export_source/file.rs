//! `--template PATH`: one template file, its nested stacks listed, not followed.

use std::path::Path;

use super::error::SourceError;
use super::parse::{checked, read_template};
use super::types::{NestedLink, StackTemplate, TemplateSet};

/// `--template PATH`: the root template only; every nested-stack resource in it is listed
/// in [`TemplateSet::nested_without_template`].
pub fn read_template_file(path: &Path, stack: &str) -> Result<TemplateSet, SourceError> {
    let (template, format) = read_template(stack, path)?;
    let (template, nested) = checked(stack, path, template)?;
    let nested_without_template = nested
        .into_iter()
        .map(|n| NestedLink {
            parent: stack.to_string(),
            logical_id: n.logical_id,
        })
        .collect();
    Ok(TemplateSet {
        root: StackTemplate {
            stack: stack.to_string(),
            template,
            source: path.to_path_buf(),
            format,
            parent: None,
        },
        children: Vec::new(),
        display_name: None,
        region: None,
        account: None,
        nested_without_template,
        others: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export_source::error::SourceError;
    use crate::export_source::test_support::*;
    use crate::export_source::types::TemplateFormat;
    use serde_json::json;

    #[test]
    fn export_source_flat_json_and_yaml_fixtures_read_to_the_same_template() {
        let json_set =
            read_template_file(&fixtures().join("flat.template.json"), "ExportFlat").expect("json");
        let yaml_set =
            read_template_file(&fixtures().join("flat.template.yaml"), "ExportFlat").expect("yaml");
        assert_eq!(json_set.root.format, TemplateFormat::Json);
        assert_eq!(yaml_set.root.format, TemplateFormat::Yaml);
        assert_eq!(json_set.root.template, yaml_set.root.template);
        // Same key order too (the uploaded JSON is the same bytes).
        assert_eq!(
            serde_json::to_string(&json_set.root.template).expect("ser"),
            serde_json::to_string(&yaml_set.root.template).expect("ser")
        );
        let t = &yaml_set.root.template;
        assert_eq!(
            t["Resources"]["WorkerRoleD4C1B7A2"]["Properties"]["AssumeRolePolicyDocument"]
                ["Version"],
            json!("2012-10-17")
        );
        assert_eq!(yaml_set.root.stack, "ExportFlat");
        assert!(yaml_set.root.parent.is_none());
        assert!(yaml_set.children.is_empty() && yaml_set.nested_without_template.is_empty());
        assert_eq!(yaml_set.region, None);
    }

    #[test]
    fn export_source_format_is_sniffed_from_content_not_extension() {
        let s = Scratch::new();
        let yaml = std::fs::read_to_string(fixtures().join("flat.template.yaml")).expect("read");
        let as_txt = s.write("template.txt", &yaml);
        let as_json_name = s.write("template.json", &yaml);
        for p in [as_txt, as_json_name] {
            let set = read_template_file(&p, "ExportFlat").expect("yaml body");
            assert_eq!(set.root.format, TemplateFormat::Yaml, "{}", p.display());
        }
        let json = std::fs::read_to_string(fixtures().join("flat.template.json")).expect("read");
        let p = s.write("template.yaml", &format!("\u{feff}\n  {json}"));
        assert_eq!(
            read_template_file(&p, "ExportFlat")
                .expect("json")
                .root
                .format,
            TemplateFormat::Json
        );
        // A body that starts like JSON is JSON: a JSON typo that YAML would accept (here
        // a trailing comma) is an error, not a flow-style YAML template.
        let p = s.write(
            "typo.yml",
            "{\"Resources\": {\"Q\": {\"Type\": \"AWS::SQS::Queue\",}}}",
        );
        let e = read_template_file(&p, "S").expect_err("json typo");
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{e}");
    }

    #[test]
    fn export_source_malformed_json_names_stack_file_line_and_column() {
        let s = Scratch::new();
        let p = s.write(
            "bad.json",
            "{\n  \"Resources\": {\n    \"A\": {\"Type\": \"AWS::SQS::Queue\",}\n  }\n}\n",
        );
        let e = read_template_file(&p, "MyStack").expect_err("bad json");
        let msg = e.to_string();
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{msg}");
        assert!(msg.contains("MyStack") && msg.contains("bad.json"), "{msg}");
        assert!(msg.contains("line 3 column"), "{msg}");
    }

    #[test]
    fn export_source_malformed_yaml_names_stack_file_line_and_column() {
        let s = Scratch::new();
        let p = s.write(
            "bad.yaml",
            "Resources:\n  A:\n    Type: AWS::SQS::Queue\n   Properties: {}\n",
        );
        let e = read_template_file(&p, "MyStack").expect_err("bad yaml");
        let msg = e.to_string();
        match &e {
            SourceError::TemplateYaml { line, column, .. } => {
                assert_eq!(*line, Some(4), "{msg}");
                assert!(column.is_some(), "{msg}");
            }
            other => panic!("{other:?}"),
        }
        assert!(
            msg.contains("MyStack") && msg.contains("bad.yaml") && msg.contains("line 4"),
            "{msg}"
        );
    }

    #[test]
    fn export_source_a_body_that_is_no_template_is_refused() {
        let s = Scratch::new();
        for (name, body) in [
            ("list.yaml", "- a\n- b\n"),
            ("empty.yaml", ""),
            ("res.json", "{\"Resources\": []}"),
        ] {
            let p = s.write(name, body);
            let e = read_template_file(&p, "MyStack").expect_err(name);
            assert!(matches!(e, SourceError::NotATemplate { .. }), "{name}: {e}");
            assert!(e.to_string().contains(name), "{e}");
        }
        let e = read_template_file(&s.0.join("absent.json"), "MyStack").expect_err("absent");
        assert!(matches!(e, SourceError::ReadTemplate { .. }), "{e}");
        assert!(e.to_string().contains("MyStack"), "{e}");
    }

    #[test]
    fn export_source_template_file_does_not_follow_nested_stacks() {
        let root = fixtures()
            .join("nested.out")
            .join("ExportNested.template.json");
        let set = read_template_file(&root, ROOT).expect("root");
        assert!(set.children.is_empty());
        assert_eq!(
            set.nested_without_template,
            vec![NestedLink {
                parent: ROOT.into(),
                logical_id: MIDDLE_ID.into()
            }]
        );
    }
}
