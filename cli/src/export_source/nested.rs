//! Nested stacks: each child's template found through its parent's `aws:asset:path`.

use std::path::{Path, PathBuf};

use cdkd_core::keys::child_stack_name;

use super::error::SourceError;
use super::parse::{checked, read_template, NestedRow};
use super::types::{NestedLink, StackTemplate, TemplateSet};

pub(super) fn canonical(p: &Path) -> PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Follows the nested-stack resources of `parent` (whose template is `parent_path`),
/// depth first, appending each child after its parent.
pub(super) fn walk_nested(
    parent: &str,
    parent_path: &Path,
    nested: Vec<NestedRow>,
    set: &mut TemplateSet,
    chain: &mut Vec<PathBuf>,
) -> Result<(), SourceError> {
    let base = parent_path.parent().unwrap_or(Path::new("."));
    for row in nested {
        let link = NestedLink {
            parent: parent.to_string(),
            logical_id: row.logical_id.clone(),
        };
        let rel = match row.asset_path {
            Err(refusal) => {
                return Err(SourceError::BadAssetPath {
                    stack: parent.to_string(),
                    refusal,
                })
            }
            // An empty path names nothing, like an absent one.
            Ok(None) => None,
            Ok(Some(p)) if p.is_empty() => None,
            Ok(Some(p)) => Some(p),
        };
        let Some(rel) = rel else {
            set.nested_without_template.push(link);
            continue;
        };
        let child = child_stack_name(parent, &row.logical_id);
        let path = base.join(&rel);
        if !path.is_file() {
            return Err(SourceError::MissingNestedTemplate {
                child,
                parent: parent.to_string(),
                logical_id: row.logical_id,
                path,
            });
        }
        let canon = canonical(&path);
        if chain.contains(&canon) {
            return Err(SourceError::NestedCycle { child, path });
        }
        let (template, format) = read_template(&child, &path)?;
        let (template, grandchildren) = checked(&child, &path, template)?;
        set.children.push(StackTemplate {
            stack: child.clone(),
            template,
            source: path.clone(),
            format,
            parent: Some(link),
        });
        chain.push(canon);
        walk_nested(&child, &path, grandchildren, set, chain)?;
        chain.pop();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export_source::assembly::read_cloud_assembly;
    use crate::export_source::test_support::*;
    use crate::export_source::types::TemplateFormat;
    use serde_json::json;

    #[test]
    fn export_source_missing_nested_template_names_child_parent_and_file() {
        let s = nested_copy();
        std::fs::remove_file(s.0.join(LEAF_FILE)).expect("rm");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("missing leaf");
        match &e {
            SourceError::MissingNestedTemplate {
                child,
                parent,
                logical_id,
                path,
            } => {
                assert_eq!(child, &format!("{ROOT}~{MIDDLE_ID}~{LEAF_ID}"));
                assert_eq!(parent, &format!("{ROOT}~{MIDDLE_ID}"));
                assert_eq!(logical_id, LEAF_ID);
                assert_eq!(path, &s.0.join(LEAF_FILE));
            }
            other => panic!("{other:?}"),
        }
        assert!(e.to_string().contains("aws:asset:path"), "{e}");
    }

    #[test]
    fn export_source_malformed_nested_template_names_the_child_and_line() {
        let s = nested_copy();
        s.write(MIDDLE_FILE, "{\n \"Resources\": {\n  \"Q\": \n }\n}\n");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad middle");
        assert!(matches!(e, SourceError::TemplateJson { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&format!("{ROOT}~{MIDDLE_ID}")) && msg.contains(MIDDLE_FILE),
            "{msg}"
        );
        assert!(msg.contains("line 4"), "{msg}");
        // A nested template may be YAML too, and is then parsed as YAML.
        let leaf_yaml = "Parameters:\n  P: {Type: String}\nResources:\n  Param:\n    Type: AWS::SSM::Parameter\n    Properties: {Type: String, Value: !Ref P}\n";
        let s = nested_copy();
        s.write(LEAF_FILE, leaf_yaml);
        let set = read_cloud_assembly(s.path(), Some(ROOT)).expect("yaml leaf");
        assert_eq!(set.children[1].format, TemplateFormat::Yaml);
        assert_eq!(
            set.children[1].template["Resources"]["Param"]["Properties"]["Value"],
            json!({"Ref": "P"})
        );
        s.write(LEAF_FILE, "Resources:\n  A: [\n");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad yaml leaf");
        assert!(
            matches!(e, SourceError::TemplateYaml { line: Some(_), .. }),
            "{e}"
        );
        assert!(e.to_string().contains(LEAF_ID), "{e}");
    }

    #[test]
    fn export_source_nested_stack_without_asset_path_is_listed_not_followed() {
        let s = nested_copy();
        edit_json(&s.0.join(MIDDLE_FILE), |t| {
            t["Resources"][LEAF_ID]["Metadata"]
                .as_object_mut()
                .expect("metadata")
                .remove("aws:asset:path");
        });
        let set = read_cloud_assembly(s.path(), Some(ROOT)).expect("assembly");
        assert_eq!(set.children.len(), 1);
        assert_eq!(
            set.nested_without_template,
            vec![NestedLink {
                parent: format!("{ROOT}~{MIDDLE_ID}"),
                logical_id: LEAF_ID.into()
            }]
        );
    }

    #[test]
    fn export_source_absolute_asset_path_is_refused() {
        let s = nested_copy();
        let abs = s.0.join(LEAF_FILE);
        edit_json(&s.0.join(MIDDLE_FILE), |t| {
            t["Resources"][LEAF_ID]["Metadata"]["aws:asset:path"] = json!(abs.to_string_lossy());
        });
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("absolute");
        assert!(matches!(e, SourceError::BadAssetPath { .. }), "{e}");
        assert!(e.to_string().contains(LEAF_ID), "{e}");
    }

    #[test]
    fn export_source_nested_cycle_is_refused() {
        let s = nested_copy();
        edit_json(&s.0.join(LEAF_FILE), |t| {
            t["Resources"]["Again"] = json!({
                "Type": "AWS::CloudFormation::Stack",
                "Metadata": {"aws:asset:path": MIDDLE_FILE}
            });
        });
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("cycle");
        assert!(matches!(e, SourceError::NestedCycle { .. }), "{e}");
    }
}
