//! Every definition in statemachines/ (recursively, `*.asl.json`) and every example in
//! statemachines/examples/ passes the npm package asl-validator and this engine's own
//! load-time validation.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use cdkd_engine::StateMachine;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn definitions() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                n.ends_with(".asl.json")
                    || (n.ends_with(".json") && p.parent().is_some_and(|d| d.ends_with("examples")))
            }) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(&root().join("statemachines"), &mut out);
    out.sort();
    out
}

/// A value for every `${Name}` in the text: a state machine ARN for names ending in
/// StateMachineArn, a Lambda ARN otherwise.
fn dummy_subs(text: &str) -> HashMap<String, String> {
    let mut subs = HashMap::new();
    let mut rest = text;
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let Some(j) = after.find('}') else { break };
        let name = &after[..j];
        let v = if name.ends_with("StateMachineArn") {
            format!("arn:aws:states:us-east-1:123456789012:stateMachine:{name}")
        } else {
            format!("arn:aws:lambda:us-east-1:123456789012:function:{name}")
        };
        subs.insert(name.to_string(), v);
        rest = &after[j + 1..];
    }
    subs
}

#[test]
fn every_definition_loads_with_the_engine_validation() {
    let defs = definitions();
    assert!(
        !defs.is_empty(),
        "no definitions found under statemachines/"
    );
    let mut bad = Vec::new();
    for d in &defs {
        let text = std::fs::read_to_string(d).unwrap();
        if let Err(e) = StateMachine::load(&text, &dummy_subs(&text)) {
            bad.push(format!("{}: {e}", d.display()));
        }
    }
    assert!(bad.is_empty(), "refused definitions:\n{}", bad.join("\n"));
}

#[test]
fn every_definition_passes_asl_validator() {
    let bin = root().join("node_modules/.bin/asl-validator");
    assert!(
        bin.exists(),
        "{} is missing: run `make setup` (it installs the npm package asl-validator into node_modules/)",
        bin.display()
    );
    let defs = definitions();
    assert!(
        !defs.is_empty(),
        "no definitions found under statemachines/"
    );
    let tmp = std::env::temp_dir().join(format!("cdkd-asl-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut cmd = Command::new(&bin);
    for (i, d) in defs.iter().enumerate() {
        // Substitute first: asl-validator checks ARNs and paths in the final text.
        let text = std::fs::read_to_string(d).unwrap();
        let mut out = text.clone();
        for (k, v) in dummy_subs(&text) {
            out = out.replace(&format!("${{{k}}}"), &v);
        }
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let p = tmp.join(format!("{i:03}-{name}"));
        std::fs::write(&p, out).unwrap();
        cmd.arg("--json-path").arg(&p);
    }
    let o = cmd
        .output()
        .expect("could not run asl-validator (is node installed? run `make setup`)");
    let _ = std::fs::remove_dir_all(&tmp);
    assert!(
        o.status.success(),
        "asl-validator refused a definition:\n{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}
