//! The deployment agrees with the code: every step of `steps::STEPS` is served by one
//! function in `infra/template.yaml` (its `Handler` names the step; every function runs
//! the one bootstrap `cdkd-step`, built to `target/lambda/cdkd-step/`), and every
//! definition in `statemachines/` is deployed by the template with exactly the
//! substitutions its text uses, each routed to the right function or state machine.
//!
//! The template is read by indentation (no YAML library): CloudFormation short-form tags
//! (`!Ref`, `!GetAtt`, `!Sub`) are plain text here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use cdkd_functions::steps::{step_for_substitution, STEPS};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// One top-level resource: its type and its property lines (`key: value`, every depth).
#[derive(Debug, Default)]
struct Resource {
    kind: String,
    /// `(indent, key, value)` of every line of the resource after its name.
    lines: Vec<(usize, String, String)>,
}

impl Resource {
    fn prop(&self, key: &str) -> Option<&str> {
        self.lines
            .iter()
            .find(|(_, k, _)| k == key)
            .map(|(_, _, v)| v.as_str())
    }

    /// The `key: value` entries of the mapping under `key` (one level down).
    fn mapping(&self, key: &str) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        let Some(start) = self.lines.iter().position(|(_, k, _)| k == key) else {
            return out;
        };
        let base = self.lines[start].0;
        let mut child = None;
        for (indent, k, v) in &self.lines[start + 1..] {
            if *indent <= base {
                break;
            }
            let c = *child.get_or_insert(*indent);
            if *indent == c {
                out.insert(k.clone(), v.clone());
            }
        }
        out
    }
}

fn strip_comment(line: &str) -> &str {
    match line.find(" #") {
        Some(i) => &line[..i],
        None if line.trim_start().starts_with('#') => "",
        None => line,
    }
}

/// The top-level sections' children: `Resources` and `Outputs` entries by name.
fn parse_template(text: &str) -> (BTreeMap<String, Resource>, BTreeMap<String, Resource>) {
    let mut resources = BTreeMap::new();
    let mut outputs = BTreeMap::new();
    let mut section = String::new();
    let mut current: Option<(String, Resource)> = None;
    let flush = |section: &str,
                 cur: &mut Option<(String, Resource)>,
                 r: &mut BTreeMap<String, Resource>,
                 o: &mut BTreeMap<String, Resource>| {
        if let Some((name, res)) = cur.take() {
            match section {
                "Resources" => r.insert(name, res),
                "Outputs" => o.insert(name, res),
                _ => None,
            };
        }
    };
    for raw in text.lines() {
        let line = strip_comment(raw);
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let body = line.trim().trim_start_matches("- ");
        let (key, value) = match body.split_once(':') {
            Some((k, v)) => (k.trim().to_string(), v.trim().to_string()),
            None => (String::new(), body.to_string()),
        };
        if indent == 0 {
            flush(&section, &mut current, &mut resources, &mut outputs);
            section = key;
        } else if indent == 2 {
            flush(&section, &mut current, &mut resources, &mut outputs);
            current = Some((key, Resource::default()));
        } else if let Some((_, res)) = current.as_mut() {
            if indent == 4 && key == "Type" {
                res.kind = value.clone();
            }
            res.lines.push((indent, key, value));
        }
    }
    flush(&section, &mut current, &mut resources, &mut outputs);
    (resources, outputs)
}

fn template() -> (BTreeMap<String, Resource>, BTreeMap<String, Resource>) {
    let text = std::fs::read_to_string(root().join("infra/template.yaml")).unwrap();
    parse_template(&text)
}

/// Every `${Name}` in a definition.
fn substitutions_of(text: &str) -> BTreeSet<String> {
    text.split("${")
        .skip(1)
        .filter_map(|p| p.find('}').map(|i| p[..i].to_string()))
        .collect()
}

/// `statemachines/*.asl.json` (not the examples).
fn definitions() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root().join("statemachines"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".asl.json"))
        .collect();
    v.sort();
    v
}

/// Step -> function resource name, from each function's `Handler`.
fn functions_by_step(resources: &BTreeMap<String, Resource>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (name, r) in resources
        .iter()
        .filter(|(_, r)| r.kind == "AWS::Serverless::Function")
    {
        let step = r
            .prop("Handler")
            .unwrap_or_else(|| panic!("{name} has no Handler naming its step"));
        assert!(
            r.prop("CodeUri").is_none(),
            "{name} has a CodeUri of its own: every step runs the one bootstrap of Globals"
        );
        assert!(
            out.insert(step.to_string(), name.clone()).is_none(),
            "two functions serve {step}"
        );
    }
    out
}

#[test]
fn every_step_has_a_template_function_and_nothing_else_does() {
    let (resources, _) = template();
    let deployed: BTreeSet<String> = functions_by_step(&resources).into_keys().collect();
    let steps: BTreeSet<String> = STEPS.iter().map(|(s, _)| s.to_string()).collect();
    assert_eq!(deployed, steps, "template functions vs steps::STEPS");
}

#[test]
fn every_function_runs_the_one_bootstrap() {
    let text = std::fs::read_to_string(root().join("infra/template.yaml")).unwrap();
    let start = text.find("\nGlobals:").expect("Globals");
    let end = text.find("\nResources:").expect("Resources");
    assert!(
        text[start..end].contains("CodeUri: ../target/lambda/cdkd-step/"),
        "Globals.Function.CodeUri must be the one bootstrap's directory"
    );
    let bins: BTreeSet<String> = std::fs::read_dir(root().join("functions/src/bin"))
        .unwrap()
        .filter_map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .strip_suffix(".rs")
                .map(str::to_string)
        })
        .collect();
    assert_eq!(
        bins,
        BTreeSet::from(["cdkd-step".to_string()]),
        "functions/src/bin"
    );
}

#[test]
fn every_definition_is_deployed_with_exactly_its_substitutions() {
    let (resources, _) = template();
    let machines: BTreeMap<String, &Resource> = resources
        .iter()
        .filter(|(_, r)| r.kind == "AWS::Serverless::StateMachine")
        .map(|(n, r)| (n.clone(), r))
        .collect();
    let mut deployed_files = BTreeSet::new();
    for (name, sm) in &machines {
        let uri = sm
            .prop("DefinitionUri")
            .unwrap_or_else(|| panic!("{name} has no DefinitionUri"));
        let file = uri
            .strip_prefix("../statemachines/")
            .unwrap_or_else(|| panic!("{name}: {uri} is not ../statemachines/<file>"));
        deployed_files.insert(file.to_string());
        let text = std::fs::read_to_string(root().join("statemachines").join(file))
            .unwrap_or_else(|e| panic!("{name}: cannot read {uri}: {e}"));
        let used = substitutions_of(&text);
        let given: BTreeSet<String> = sm.mapping("DefinitionSubstitutions").into_keys().collect();
        assert_eq!(
            given, used,
            "{name}: DefinitionSubstitutions vs the ${{...}} in {file}"
        );
    }
    let files: BTreeSet<String> = definitions()
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().to_string())
        .collect();
    assert_eq!(
        deployed_files, files,
        "statemachines/*.asl.json vs the template's state machines"
    );
}

#[test]
fn every_substitution_routes_to_the_resource_it_names() {
    let (resources, _) = template();
    let by_step = functions_by_step(&resources);
    for (name, sm) in resources
        .iter()
        .filter(|(_, r)| r.kind == "AWS::Serverless::StateMachine")
    {
        for (sub, value) in sm.mapping("DefinitionSubstitutions") {
            if sub.ends_with("FunctionArn") {
                let step = step_for_substitution(&sub)
                    .unwrap_or_else(|| panic!("{name}: ${{{sub}}} names no step"));
                let function = &by_step[step];
                assert_eq!(
                    value,
                    format!("!GetAtt {function}.Arn"),
                    "{name}: ${{{sub}}} must be step {step}'s function"
                );
            } else if let Some(machine) = sub.strip_suffix("Arn") {
                let target = value
                    .strip_prefix("!Ref ")
                    .unwrap_or_else(|| panic!("{name}: ${{{sub}}} = {value}"));
                assert_eq!(
                    target, machine,
                    "{name}: ${{{sub}}} must reference {machine}"
                );
                assert_eq!(
                    resources[target].kind, "AWS::Serverless::StateMachine",
                    "{target}"
                );
            } else {
                panic!(
                    "{name}: substitution ${{{sub}}} is neither a function nor a state machine ARN"
                );
            }
        }
    }
}

#[test]
fn outputs_name_every_state_machine_arn() {
    let (resources, outputs) = template();
    for (name, _) in resources
        .iter()
        .filter(|(_, r)| r.kind == "AWS::Serverless::StateMachine")
    {
        let out = outputs
            .get(&format!("{name}Arn"))
            .unwrap_or_else(|| panic!("no output {name}Arn"));
        assert_eq!(out.prop("Value"), Some(format!("!Ref {name}").as_str()));
    }
}

#[test]
fn template_parser_reads_tags_and_nested_mappings() {
    let (r, o) = parse_template(
        "Resources:\n  A:\n    Type: AWS::Serverless::StateMachine\n    Properties:\n      DefinitionSubstitutions:\n        XFunctionArn: !GetAtt F.Arn # note\n        YStateMachineArn: !Ref Y\n      Policies:\n        - !Ref P\nOutputs:\n  AArn:\n    Value: !Ref A\n",
    );
    let subs = r["A"].mapping("DefinitionSubstitutions");
    assert_eq!(subs.len(), 2);
    assert_eq!(subs["XFunctionArn"], "!GetAtt F.Arn");
    assert_eq!(o["AArn"].prop("Value"), Some("!Ref A"));
}

/// The schedule's target input (a folded `!Sub` block), with sample parameter values.
fn schedule_input(text: &str, values: &[(&str, &str)]) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.trim() == "Input: !Sub >-")
        .expect("the schedule's Target.Input is a folded !Sub block");
    let base = lines[start].len() - lines[start].trim_start().len();
    let mut json = lines[start + 1..]
        .iter()
        .take_while(|l| l.len() - l.trim_start().len() > base)
        .map(|l| l.trim())
        .collect::<Vec<_>>()
        .join(" ");
    for (k, v) in values {
        json = json.replace(&format!("${{{k}}}"), v);
    }
    json
}

#[test]
fn schedule_input_is_a_valid_cleanup_select_input() {
    let text = std::fs::read_to_string(root().join("infra/template.yaml")).unwrap();
    let values = [
        ("StateBucket", "my-state"),
        ("StatePrefix", "cdkd"),
        ("StackNamePattern", "preview-*"),
        ("MinimumAge", "7d"),
        ("Regions", "us-east-1,eu-west-1"),
        ("DryRun", "true"),
    ];
    let json = schedule_input(&text, &values);
    assert!(!json.contains("${"), "unsubstituted parameter in {json}");
    let input: cdkd_functions::cleanup::CleanupInput =
        serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
    assert_eq!(input.state_bucket, "my-state");
    assert_eq!(input.pattern, "preview-*");
    assert_eq!(input.minimum_age, "7d");
    assert_eq!(input.regions, vec!["us-east-1", "eu-west-1"]);
    assert!(input.dry_run);
    let (resources, _) = template();
    let schedule = resources
        .values()
        .find(|r| r.kind == "AWS::Scheduler::Schedule")
        .expect("a schedule");
    assert_eq!(schedule.prop("Arn"), Some("!Ref CleanupStateMachine"));
}

#[test]
fn every_state_machine_may_invoke_exactly_the_functions_its_definition_names() {
    let (resources, _) = template();
    let by_step = functions_by_step(&resources);
    for (name, sm) in resources
        .iter()
        .filter(|(_, r)| r.kind == "AWS::Serverless::StateMachine")
    {
        let named: BTreeSet<String> = sm
            .mapping("DefinitionSubstitutions")
            .into_keys()
            .filter_map(|sub| step_for_substitution(&sub))
            .map(|step| format!("!Ref {}", by_step[step]))
            .collect();
        // `- LambdaInvokePolicy: {FunctionName: !Ref <Function>}` under Policies.
        let invokable: BTreeSet<String> = sm
            .lines
            .iter()
            .filter(|(_, k, _)| k == "FunctionName")
            .map(|(_, _, v)| v.clone())
            .collect();
        assert_eq!(
            invokable, named,
            "{name}: LambdaInvokePolicy functions vs the functions its definition invokes"
        );
    }
}

/// The lines of one top-level resource of the template (after its name line, up to the
/// next resource or section).
fn resource_text(text: &str, name: &str) -> String {
    let head = format!("  {name}:");
    text.lines()
        .skip_while(|l| *l != head)
        .skip(1)
        .take_while(|l| l.trim().is_empty() || l.len() - l.trim_start().len() > 2)
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_approval_step_may_only_read_and_write_the_runs_folder() {
    let text = std::fs::read_to_string(root().join("infra/template.yaml")).unwrap();
    let (resources, _) = template();
    let function = &functions_by_step(&resources)["export-approval"];
    let block = resource_text(&text, function);
    assert!(!block.is_empty(), "no resource {function}");
    assert!(block.contains("Handler: export-approval"), "{block}");
    for broad in [
        "StateReadWritePolicy",
        "StateReadPolicy",
        "DeletePolicyArn",
        "ExportPolicyArn",
        "s3:DeleteObject",
        "cloudformation:",
        "iam:",
    ] {
        assert!(
            !block.contains(broad),
            "{function} must not get {broad}:\n{block}"
        );
    }
    assert!(block.contains("s3:PutObject"), "{block}");
    let objects: Vec<&str> = block
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("Resource:") && l.contains(":s3:::") && l.contains('/'))
        .collect();
    assert!(!objects.is_empty(), "{block}");
    for r in objects {
        assert!(
            r.ends_with("/${StatePrefix}/_runs/*"),
            "{function}: {r} is wider than the runs folder"
        );
    }
}

/// The wait a stopped destroy's report names before its force-unlock is the
/// `destroy-wave` function's own timeout.
#[test]
fn the_wait_before_a_stopped_destroys_unlock_is_the_wave_functions_timeout() {
    let (resources, _) = template();
    let by_step = functions_by_step(&resources);
    let wave = &resources[&by_step["destroy-wave"]];
    assert_eq!(
        wave.prop("Timeout"),
        Some(cdkd_core::contention::WAVE_TIMEOUT_S.to_string().as_str()),
        "DestroyWaveFunction's Timeout vs contention::WAVE_TIMEOUT_S"
    );
}
