//! `--cdk-out DIR`: the stacks of a cloud assembly, stages included, and the one chosen.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::error::SourceError;
use super::nested::{canonical, walk_nested};
use super::parse::{checked, read_template};
use super::types::{StackTemplate, TemplateSet};

/// A stack artifact of a cloud assembly (possibly inside a stage's nested assembly).
#[derive(Debug, Clone)]
struct AssemblyStack {
    name: String,
    display_name: String,
    /// The assembly directory holding the manifest that declares it.
    dir: PathBuf,
    manifest: PathBuf,
    template_file: Option<String>,
    region: Option<String>,
    account: Option<String>,
}

impl AssemblyStack {
    fn label(&self) -> String {
        if self.display_name == self.name {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.display_name)
        }
    }
}

pub(super) fn read_manifest(dir: &Path) -> Result<(PathBuf, Map<String, Value>), SourceError> {
    let path = dir.join("manifest.json");
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(SourceError::NoManifest {
                dir: dir.to_path_buf(),
            })
        }
        Err(e) => {
            return Err(SourceError::ReadFile {
                path,
                cause: e.to_string(),
            })
        }
    };
    match cdkd_core::json::parse_json(&bytes) {
        Ok(Value::Object(m)) => Ok((path, m)),
        Ok(other) => Err(SourceError::BadManifest {
            path,
            problem: format!(
                "is {}, not a JSON object",
                cdkd_core::state::kind_of(&other)
            ),
        }),
        Err(message) => Err(SourceError::FileJson { path, message }),
    }
}

/// `aws://account/region`, with CDK's `unknown-account` / `unknown-region` as absent.
fn parse_environment(env: Option<&str>) -> (Option<String>, Option<String>) {
    let Some(rest) = env.and_then(|e| e.strip_prefix("aws://")) else {
        return (None, None);
    };
    let (account, region) = rest.split_once('/').unwrap_or((rest, ""));
    let known = |v: &str, unknown: &str| (!v.is_empty() && v != unknown).then(|| v.to_string());
    (
        known(account, "unknown-account"),
        known(region, "unknown-region"),
    )
}

/// Every stack artifact of the assembly at `dir`, stages' nested assemblies included (in
/// manifest order). A stage whose assembly cannot be read is skipped with a warning.
fn assembly_stacks(
    dir: &Path,
    out: &mut Vec<AssemblyStack>,
    depth: usize,
) -> Result<(), SourceError> {
    let (manifest, m) = read_manifest(dir)?;
    let artifacts = match m.get("artifacts") {
        None => return Ok(()),
        Some(Value::Object(a)) => a,
        Some(other) => {
            return Err(SourceError::BadManifest {
                path: manifest,
                problem: format!(
                    "has an 'artifacts' entry that is {}, not an object",
                    cdkd_core::state::kind_of(other)
                ),
            })
        }
    };
    for (id, artifact) in artifacts {
        let Some(artifact) = artifact.as_object() else {
            continue;
        };
        let props = artifact.get("properties").and_then(Value::as_object);
        let prop = |k: &str| props.and_then(|p| p.get(k)).and_then(Value::as_str);
        match artifact.get("type").and_then(Value::as_str) {
            Some("aws:cloudformation:stack") => {
                let name = prop("stackName")
                    .filter(|s| !s.is_empty())
                    .unwrap_or(id)
                    .to_string();
                let (account, region) =
                    parse_environment(artifact.get("environment").and_then(Value::as_str));
                out.push(AssemblyStack {
                    display_name: artifact
                        .get("displayName")
                        .and_then(Value::as_str)
                        .unwrap_or(&name)
                        .to_string(),
                    name,
                    dir: dir.to_path_buf(),
                    manifest: manifest.clone(),
                    template_file: prop("templateFile").map(str::to_string),
                    region,
                    account,
                });
            }
            // A stage: its stacks live in a nested assembly in a subdirectory.
            Some("cdk:cloud-assembly") if depth < 16 => {
                if let Some(sub) = prop("directoryName") {
                    if let Err(e) = assembly_stacks(&dir.join(sub), out, depth + 1) {
                        tracing::warn!("skipping the nested cloud assembly {sub}: {e}");
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

fn select_stack<'a>(
    dir: &Path,
    stacks: &'a [AssemblyStack],
    wanted: Option<&str>,
) -> Result<&'a AssemblyStack, SourceError> {
    let available = || {
        stacks
            .iter()
            .map(AssemblyStack::label)
            .collect::<Vec<_>>()
            .join(", ")
    };
    if stacks.is_empty() {
        return Err(SourceError::NoStacks {
            dir: dir.to_path_buf(),
        });
    }
    let Some(wanted) = wanted.filter(|w| !w.is_empty()) else {
        return match stacks {
            [only] => Ok(only),
            _ => Err(SourceError::StackNotNamed {
                dir: dir.to_path_buf(),
                available: available(),
            }),
        };
    };
    let by_name: Vec<_> = stacks.iter().filter(|s| s.name == wanted).collect();
    let matches = if by_name.is_empty() {
        stacks.iter().filter(|s| s.display_name == wanted).collect()
    } else {
        by_name
    };
    match matches.as_slice() {
        [one] => Ok(one),
        [] => Err(SourceError::StackNotFound {
            stack: wanted.to_string(),
            dir: dir.to_path_buf(),
            available: available(),
        }),
        several => Err(SourceError::StackAmbiguous {
            stack: wanted.to_string(),
            dir: dir.to_path_buf(),
            available: several
                .iter()
                .map(|s| format!("{} in {}", s.label(), s.manifest.display()))
                .collect::<Vec<_>>()
                .join(", "),
        }),
    }
}

/// `--cdk-out DIR`: the stack's template and every nested template below it.
pub fn read_cloud_assembly(dir: &Path, stack: Option<&str>) -> Result<TemplateSet, SourceError> {
    let mut stacks = Vec::new();
    assembly_stacks(dir, &mut stacks, 0)?;
    let chosen = select_stack(dir, &stacks, stack)?;
    let file = chosen
        .template_file
        .as_deref()
        .filter(|f| !f.is_empty())
        .ok_or_else(|| SourceError::NoTemplateFile {
            stack: chosen.name.clone(),
            manifest: chosen.manifest.clone(),
        })?;
    let path = chosen.dir.join(file);
    if !path.exists() {
        return Err(SourceError::MissingTemplate {
            stack: chosen.name.clone(),
            path,
        });
    }
    let (template, format) = read_template(&chosen.name, &path)?;
    let (template, nested) = checked(&chosen.name, &path, template)?;
    let mut set = TemplateSet {
        root: StackTemplate {
            stack: chosen.name.clone(),
            template,
            source: path.clone(),
            format,
            parent: None,
        },
        children: Vec::new(),
        display_name: Some(chosen.display_name.clone()),
        region: chosen.region.clone(),
        account: chosen.account.clone(),
        nested_without_template: Vec::new(),
        others: other_templates(&stacks, chosen),
    };
    let mut chain = vec![canonical(&path)];
    walk_nested(&chosen.name, &path, nested, &mut set, &mut chain)?;
    Ok(set)
}

/// Every stack of the assembly but `chosen`, with its template (for the consumer scan).
fn other_templates(stacks: &[AssemblyStack], chosen: &AssemblyStack) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for s in stacks {
        if s.name == chosen.name && s.manifest == chosen.manifest {
            continue;
        }
        let Some(file) = s.template_file.as_deref().filter(|f| !f.is_empty()) else {
            continue;
        };
        match read_template(&s.name, &s.dir.join(file)) {
            Ok((t, _)) => out.push((s.name.clone(), t)),
            Err(e) => tracing::warn!("the cross-stack scan skips stack {}: {e}", s.name),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export_source::test_support::*;
    use serde_json::json;

    #[test]
    fn export_source_cloud_assembly_walks_three_levels_with_child_names() {
        let dir = fixtures().join("nested.out");
        let set = read_cloud_assembly(&dir, Some(ROOT)).expect("assembly");
        assert_nested_fixture(&set, &dir);
        // One stack in the assembly: it is chosen without a name.
        let set = read_cloud_assembly(&dir, None).expect("only stack");
        assert_nested_fixture(&set, &dir);
    }

    #[test]
    fn export_source_nested_fixture_parameters_match_their_parents() {
        // The fixture's Parameters passed by each nested resource are the child's declared
        // parameters, and each Ref/GetAtt names something of the parent.
        let set =
            read_cloud_assembly(&fixtures().join("nested.out"), Some(ROOT)).expect("assembly");
        for child in &set.children {
            let link = child.parent.as_ref().expect("parent");
            let parent = set
                .stacks()
                .find(|s| s.stack == link.parent)
                .expect("parent template");
            let row = &parent.template["Resources"][&link.logical_id];
            let passed = row["Properties"]["Parameters"]
                .as_object()
                .expect("parameters");
            let declared = child.template["Parameters"].as_object().expect("declared");
            let mut a: Vec<_> = passed.keys().collect();
            let mut b: Vec<_> = declared.keys().collect();
            a.sort();
            b.sort();
            assert_eq!(a, b, "{}", child.stack);
            for v in passed.values() {
                let target = v
                    .get("Ref")
                    .or_else(|| v["Fn::GetAtt"].get(0))
                    .and_then(Value::as_str)
                    .expect("ref");
                assert!(
                    parent.template["Resources"].get(target).is_some()
                        || parent.template["Parameters"].get(target).is_some(),
                    "{target} in {}",
                    parent.stack
                );
            }
        }
    }

    #[test]
    fn export_source_stack_is_matched_by_name_or_display_name() {
        let s = nested_copy();
        edit_json(&s.0.join("manifest.json"), |m| {
            let art = &mut m["artifacts"]["ExportNested"];
            art["properties"]["stackName"] = json!("export-nested-prod");
            art["displayName"] = json!("Prod/ExportNested");
            art["environment"] = json!("aws://unknown-account/unknown-region");
        });
        for wanted in ["export-nested-prod", "Prod/ExportNested"] {
            let set = read_cloud_assembly(s.path(), Some(wanted)).expect(wanted);
            assert_eq!(set.root.stack, "export-nested-prod");
            assert_eq!(set.display_name.as_deref(), Some("Prod/ExportNested"));
            assert!(set.children[0].stack.starts_with("export-nested-prod~"));
            assert_eq!(
                (set.region.as_deref(), set.account.as_deref()),
                (None, None)
            );
        }
        // The artifact id is not a name once stackName differs.
        let e = read_cloud_assembly(s.path(), Some("ExportNested")).expect_err("artifact id");
        assert!(matches!(e, SourceError::StackNotFound { .. }), "{e}");
        assert!(
            e.to_string()
                .contains("export-nested-prod (Prod/ExportNested)"),
            "{e}"
        );
    }

    #[test]
    fn export_source_stage_assemblies_are_searched() {
        let s = Scratch::new();
        copy_dir(&fixtures().join("nested.out"), &s.0.join("assembly-Prod"));
        edit_json(&s.0.join("assembly-Prod/manifest.json"), |m| {
            m["artifacts"]["ExportNested"]["properties"]["stackName"] = json!("Prod-ExportNested");
        });
        s.write(
            "manifest.json",
            &json!({"version": "38.0.1", "artifacts": {
                "assembly-Prod": {"type": "cdk:cloud-assembly",
                                  "properties": {"directoryName": "assembly-Prod", "displayName": "Prod"}},
                "Tree": {"type": "cdk:tree", "properties": {"file": "tree.json"}}
            }})
            .to_string(),
        );
        let set = read_cloud_assembly(s.path(), Some("Prod-ExportNested")).expect("stage stack");
        assert_eq!(set.stacks().count(), 3);
        assert_eq!(
            set.children[1].source,
            s.0.join("assembly-Prod").join(LEAF_FILE)
        );
    }

    #[test]
    fn export_source_no_manifest_is_refused_naming_the_directory() {
        let s = Scratch::new();
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("no manifest");
        assert!(matches!(e, SourceError::NoManifest { .. }), "{e}");
        assert!(e.to_string().contains("manifest.json"), "{e}");
        s.write("manifest.json", "{\"artifacts\": ");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("bad manifest");
        assert!(matches!(e, SourceError::FileJson { .. }), "{e}");
        s.write(
            "manifest.json",
            "{\"version\": \"38.0.1\", \"artifacts\": {}}",
        );
        let e = read_cloud_assembly(s.path(), None).expect_err("no stacks");
        assert!(matches!(e, SourceError::NoStacks { .. }), "{e}");
    }

    #[test]
    fn export_source_stack_not_in_the_assembly_lists_the_stacks_there() {
        let e =
            read_cloud_assembly(&fixtures().join("nested.out"), Some("Other")).expect_err("absent");
        assert!(matches!(e, SourceError::StackNotFound { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("Other") && msg.contains("it has: ExportNested"),
            "{msg}"
        );
    }

    #[test]
    fn export_source_several_stacks_need_a_name() {
        let s = nested_copy();
        edit_json(&s.0.join("manifest.json"), |m| {
            let mut other = m["artifacts"]["ExportNested"].clone();
            other["displayName"] = json!("Second");
            m["artifacts"]["Second"] = other;
        });
        let e = read_cloud_assembly(s.path(), None).expect_err("two stacks");
        assert!(matches!(e, SourceError::StackNotNamed { .. }), "{e}");
        assert!(e.to_string().contains("ExportNested, Second"), "{e}");
        assert_eq!(
            read_cloud_assembly(s.path(), Some("Second"))
                .expect("named")
                .root
                .stack,
            "Second"
        );
    }

    #[test]
    fn export_source_missing_stack_template_names_stack_and_file() {
        let s = nested_copy();
        std::fs::remove_file(s.0.join("ExportNested.template.json")).expect("rm");
        let e = read_cloud_assembly(s.path(), Some(ROOT)).expect_err("missing");
        assert!(matches!(e, SourceError::MissingTemplate { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains("ExportNested") && msg.contains("ExportNested.template.json"),
            "{msg}"
        );
    }
}
