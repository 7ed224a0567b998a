//! Differential test: every definition in statemachines/examples/differential/ (no Task
//! states) runs through cdkd-engine and through the emulator's own Step Functions
//! interpreter (moto server with its `stepfunctions.execute_state_machine` option, turned
//! on here through POST /moto-api/config). Status, output and error name must be
//! identical, and the cause too except for States.Runtime (whose text is the
//! implementation's own). Among them, `data-limit-*`: a state output over the 262,144-byte
//! payload quota fails both with States.DataLimitExceeded, which States.ALL does not
//! catch, and one just under it (in 2-byte characters) passes both (docs/emulator.md,
//! "AWS's limits").
//!
//! Where the emulator departs from AWS's documented behaviour, AWS wins: the case is
//! listed in `EXCEPTIONS` with the reason, the engine must give AWS's documented result
//! and the emulator the divergence recorded here.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use aws_sdk_sfn::types::ExecutionStatus;
use cdkd_engine::{Engine, EngineOptions, NoTasks, Outcome, StateMachine};
use serde_json::Value;

/// A run's result in the shape of `cdkd-flow workflow run --json`.
#[derive(Debug, Clone, PartialEq)]
struct Res {
    status: String,
    output: Option<Value>,
    error: Option<String>,
    cause: Option<String>,
}

impl Res {
    fn same_as(&self, other: &Res) -> bool {
        if self.status != other.status {
            return false;
        }
        if self.status == "SUCCEEDED" {
            return self.output == other.output;
        }
        self.error == other.error
            && (self.error.as_deref() == Some("States.Runtime") || self.cause == other.cause)
    }
}

struct Exception {
    case: &'static str,
    why: &'static str,
    /// What AWS documents, in the shape of `workflow run --json` (the engine must give
    /// this; for a failure only the error name is compared).
    aws: &'static str,
    /// What the emulator gives instead, in the same shape.
    emulator: &'static str,
}

/// Measured divergences of the emulator (moto 5.2.5) from AWS's documented behaviour.
const EXCEPTIONS: &[Exception] = &[
    Exception {
        case: "choice-no-match",
        why: "a Choice with no matching rule and no Default fails with States.NoChoiceMatched \
              (Step Functions error names); the emulator fails it with States.Runtime",
        aws: r#"{"status":"FAILED","error":"States.NoChoiceMatched"}"#,
        emulator: r#"{"status":"FAILED","error":"States.Runtime"}"#,
    },
    Exception {
        case: "intrinsics-escapes",
        why: "intrinsic string literals escape ' { } \\ with a backslash (Intrinsic functions, \
              reserved characters); the emulator's parser fails on them with a KeyError",
        aws: r#"{"status":"SUCCEEDED","output":{"braces":"literal {} and x","quote":"it's x"}}"#,
        emulator: r#"{"status":"FAILED","error":"States.Runtime"}"#,
    },
    Exception {
        case: "choice-missing-variable",
        why: "a Choice rule whose Variable is not in the input is a run-time error (States.Runtime, \
              'Invalid path ... The choice state's condition path references an invalid value'; \
              IsPresent exists for this); the emulator treats the rule as false and takes Default",
        aws: r#"{"status":"FAILED","error":"States.Runtime"}"#,
        emulator: r#"{"status":"SUCCEEDED","output":{}}"#,
    },
    Exception {
        case: "result-path-into-string",
        why: "a ResultPath that cannot be applied to the state input fails with \
              States.ResultPathMatchFailure; the emulator fails with States.Runtime (a Python TypeError)",
        aws: r#"{"status":"FAILED","error":"States.ResultPathMatchFailure"}"#,
        emulator: r#"{"status":"FAILED","error":"States.Runtime"}"#,
    },
    Exception {
        case: "intrinsic-failure",
        why: "an intrinsic function that fails inside a payload template is \
              States.IntrinsicFailure; the emulator fails with States.Runtime (a Python IndexError)",
        aws: r#"{"status":"FAILED","error":"States.IntrinsicFailure"}"#,
        emulator: r#"{"status":"FAILED","error":"States.Runtime"}"#,
    },
];

fn result_matches(ours: &Res, expected: &str) -> bool {
    let want: Value = serde_json::from_str(expected).unwrap();
    if ours.status != want["status"] {
        return false;
    }
    match ours.status.as_str() {
        "SUCCEEDED" => ours.output.as_ref() == Some(&want["output"]),
        _ => ours.error.as_deref() == want["error"].as_str(),
    }
}

fn cases_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../statemachines/examples/differential")
}

fn cases() -> Vec<(String, String, Value)> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(cases_dir()).unwrap().flatten() {
        let p = e.path();
        let Some(name) = p
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_suffix(".asl.json"))
        else {
            continue;
        };
        let def = std::fs::read_to_string(&p).unwrap();
        let input_file = cases_dir().join(format!("{name}.input.json"));
        let input: Value =
            serde_json::from_str(&std::fs::read_to_string(&input_file).unwrap()).unwrap();
        out.push((name.to_string(), def, input));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

async fn run_engine(name: &str, def: &str, input: &Value) -> Res {
    let sm = StateMachine::load(def, &HashMap::new())
        .unwrap_or_else(|e| panic!("{name}: the engine refused the definition: {e}"))
        .with_name(name);
    let engine = Engine::new(
        Arc::new(NoTasks),
        EngineOptions {
            time_scale: 0.0,
            ..EngineOptions::default()
        },
    );
    match engine
        .run_named(&sm, input.clone(), &format!("diff-{name}"))
        .await
    {
        Outcome::Succeeded(v) => Res {
            status: "SUCCEEDED".into(),
            output: Some(v),
            error: None,
            cause: None,
        },
        Outcome::Failed(f) => Res {
            status: "FAILED".into(),
            output: None,
            error: Some(f.error),
            cause: Some(f.cause),
        },
    }
}

async fn run_emulator(sfn: &aws_sdk_sfn::Client, name: &str, def: &str, input: &Value) -> Res {
    let sm_name = format!("{name}-{}", &uuid::Uuid::new_v4().simple().to_string()[..8]);
    let sm = sfn
        .create_state_machine()
        .name(&sm_name)
        .definition(def)
        .role_arn("arn:aws:iam::123456789012:role/cdkd-flow-differential")
        .send()
        .await
        .unwrap_or_else(|e| panic!("{name}: CreateStateMachine: {e:?}"));
    let ex = sfn
        .start_execution()
        .state_machine_arn(sm.state_machine_arn())
        .name(format!("diff-{name}"))
        .input(input.to_string())
        .send()
        .await
        .unwrap_or_else(|e| panic!("{name}: StartExecution: {e:?}"));
    let t0 = Instant::now();
    loop {
        let d = sfn
            .describe_execution()
            .execution_arn(ex.execution_arn())
            .send()
            .await
            .unwrap_or_else(|e| panic!("{name}: DescribeExecution: {e:?}"));
        match d.status() {
            ExecutionStatus::Running => {
                assert!(
                    t0.elapsed() < Duration::from_secs(60),
                    "{name}: the emulator's execution never ended"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            ExecutionStatus::Succeeded => {
                let raw = d.output().unwrap_or("null").to_string();
                // The emulator returns a bare-string output unquoted.
                let output = serde_json::from_str(&raw).unwrap_or(Value::String(raw));
                return Res {
                    status: "SUCCEEDED".into(),
                    output: Some(output),
                    error: None,
                    cause: None,
                };
            }
            other => {
                return Res {
                    status: other.as_str().to_string(),
                    output: None,
                    error: Some(d.error().unwrap_or_default().to_string()),
                    cause: Some(d.cause().unwrap_or_default().to_string()),
                }
            }
        }
    }
}

#[tokio::test]
async fn engine_matches_the_emulator_interpreter_on_every_differential_definition() {
    let cases = cases();
    assert!(
        cases.len() >= 25,
        "only {} differential definitions",
        cases.len()
    );
    cdkd_tests::set_emulator_interpreter(true).await;
    let sfn = aws_sdk_sfn::Client::new(&cdkd_tests::sdk().await);
    let mut report = Vec::new();
    for (name, def, input) in &cases {
        let ours = run_engine(name, def, input).await;
        let theirs = run_emulator(&sfn, name, def, input).await;
        match EXCEPTIONS.iter().find(|e| e.case == name) {
            None => {
                if !ours.same_as(&theirs) {
                    report.push(format!(
                        "{name}:\n  engine   {ours:?}\n  emulator {theirs:?}"
                    ));
                }
            }
            Some(x) => {
                if !result_matches(&ours, x.aws) {
                    report.push(format!(
                        "{name}: the engine must give AWS's {} ({}), got {ours:?}",
                        x.aws, x.why
                    ));
                }
                if !result_matches(&theirs, x.emulator) {
                    report.push(format!(
                        "{name}: the recorded emulator divergence {} no longer holds, got {theirs:?}: update EXCEPTIONS",
                        x.emulator
                    ));
                }
            }
        }
    }
    assert!(
        report.is_empty(),
        "{} of {} cases differ:\n{}",
        report.len(),
        cases.len(),
        report.join("\n")
    );
}

#[tokio::test]
async fn engine_differential_exceptions_name_existing_cases() {
    let names: Vec<String> = cases().into_iter().map(|c| c.0).collect();
    for x in EXCEPTIONS {
        assert!(
            names.iter().any(|n| n == x.case),
            "EXCEPTIONS names an unknown case {}",
            x.case
        );
    }
}
