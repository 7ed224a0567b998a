//! The destroy and export definitions' Fail states that end a run with the error a step's
//! Catch took (docs/runs.md, "A run's error and cause"): the step's own error (a
//! refusal, a held lock) ends the execution as it was caught; an error Step Functions
//! names itself (`States.Permissions`, `States.TaskFailed`, `States.Timeout`: the
//! `States.` prefix is reserved, and a Fail state ending with such a name is a
//! `States.Runtime` in this engine as in moto's interpreter) ends it with the Fail
//! state's own name, the caught error and cause in the cause.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cdkd_engine::{
    Engine, EngineOptions, Event, Failure, Outcome, StateMachine, TaskError, TaskHandler,
};
use serde_json::{json, Value};

/// The definition with each `${Name}` a Lambda function named `Name`.
fn definition(file: &str) -> StateMachine {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../statemachines")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let mut subs = HashMap::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("${") {
        let after = &rest[i + 2..];
        let j = after.find('}').unwrap();
        subs.insert(after[..j].to_string(), after[..j].to_string());
        rest = &after[j + 1..];
    }
    StateMachine::load(&text, &subs).unwrap()
}

/// Every function answers `answers[name]` (an empty object when not named) but
/// `failing`, which fails with `error` and its cause.
struct Steps {
    failing: &'static str,
    error: &'static str,
    answers: HashMap<&'static str, Value>,
}

const CAUSE: &str = "the step's own words";

#[async_trait]
impl TaskHandler for Steps {
    async fn invoke(&self, function: &str, _payload: Value) -> Result<Value, TaskError> {
        if function == self.failing {
            return Err(TaskError::new(self.error, CAUSE));
        }
        Ok(self.answers.get(function).cloned().unwrap_or(json!({})))
    }
}

/// Runs `file` on `input` with `failing` failing with `error`: the failure, and the
/// states entered.
async fn run(
    file: &str,
    input: Value,
    failing: &'static str,
    error: &'static str,
    answers: &[(&'static str, Value)],
) -> (Failure, Vec<String>) {
    let steps = Steps {
        failing,
        error,
        answers: answers.iter().cloned().collect(),
    };
    let log: Arc<Mutex<Vec<String>>> = Arc::default();
    let l2 = log.clone();
    let engine = Engine::new(
        Arc::new(steps),
        EngineOptions {
            time_scale: 0.0,
            ..EngineOptions::default()
        },
    )
    .with_observer(Arc::new(move |e: &Event| {
        if e.kind.name().ends_with("StateEntered") {
            l2.lock().unwrap().extend(e.state.clone());
        }
    }));
    let out = engine.run(&definition(file), input).await;
    let Outcome::Failed(f) = out else {
        panic!("{file} with {failing} failing {error}: {out:?}")
    };
    let entered = log.lock().unwrap().clone();
    (f, entered)
}

/// A definition, its input, the function that fails, the answers of the steps before
/// it, the Fail state the run ends in and its error name for a reserved error.
struct Case {
    file: &'static str,
    input: Value,
    failing: &'static str,
    answers: Vec<(&'static str, Value)>,
    fail: &'static str,
    name: &'static str,
}

fn case(
    file: &'static str,
    input: Value,
    failing: &'static str,
    answers: Vec<(&'static str, Value)>,
    fail: &'static str,
    name: &'static str,
) -> Case {
    Case {
        file,
        input,
        failing,
        answers,
        fail,
        name,
    }
}

fn cases() -> Vec<Case> {
    let destroy = json!({"stack": "app", "stateBucket": "b"});
    let export = json!({"stack": "app", "stateBucket": "b", "templates": {}});
    let resume = json!({"stack": "app", "stateBucket": "b", "resume": "r1"});
    let approval = json!({"stack": "app", "stateBucket": "b", "requireApproval": true});
    let planned = (
        "DestroyPlanFunctionArn",
        json!({"run": {}, "locks": [], "loops": 0}),
    );
    let locked = (
        "ExportLockFunctionArn",
        json!({"next": "import", "continueAsNew": false}),
    );
    let d = "destroy.asl.json";
    let x = "export.asl.json";
    vec![
        case(
            d,
            destroy.clone(),
            "DestroyPlanFunctionArn",
            vec![],
            "PlanFailed",
            "PlanFailed",
        ),
        case(
            d,
            destroy,
            "DestroyWaveFunctionArn",
            vec![planned],
            "Aborted",
            "DestroyFailed",
        ),
        case(
            x,
            resume,
            "ExportLockFunctionArn",
            vec![],
            "ResumeFailed",
            "ResumeFailed",
        ),
        case(
            x,
            export.clone(),
            "ExportPlanFunctionArn",
            vec![],
            "PlanFailed",
            "PlanFailed",
        ),
        case(
            x,
            approval,
            "ExportApprovalFunctionArn",
            vec![],
            "ApprovalFailed",
            "ApprovalFailed",
        ),
        case(
            x,
            export.clone(),
            "ExportLockFunctionArn",
            vec![],
            "LockFailed",
            "LockFailed",
        ),
        case(
            x,
            export,
            "ExportImportFunctionArn",
            vec![locked],
            "Failed",
            "ExportFailed",
        ),
    ]
}

#[tokio::test]
async fn a_caught_states_error_ends_the_run_with_the_fail_states_name_and_the_error_in_the_cause() {
    for Case {
        file,
        input,
        failing,
        answers,
        fail,
        name,
    } in cases()
    {
        for error in ["States.Permissions", "States.TaskFailed", "States.Timeout"] {
            let (f, entered) = run(file, input.clone(), failing, error, &answers).await;
            if fail == "ApprovalFailed" && error == "States.Timeout" {
                // The approval's own Catch names its timeout (docs/export.md, "Approval
                // (export-approval)").
                assert_eq!(f.error, "ApprovalTimedOut", "{entered:?}");
                continue;
            }
            assert_eq!(
                (f.error.as_str(), f.cause.as_str()),
                (name, format!("{error}: {CAUSE}").as_str()),
                "{file}, {failing} failing {error}: {entered:?}"
            );
            let reserved = format!("{fail}StatesError");
            assert_eq!(entered.last(), Some(&reserved), "{file}: {entered:?}");
        }
    }
}

#[tokio::test]
async fn a_steps_own_error_ends_the_run_as_it_was_caught() {
    for Case {
        file,
        input,
        failing,
        answers,
        fail,
        ..
    } in cases()
    {
        for error in ["Refused", "LockHeld"] {
            let (f, entered) = run(file, input.clone(), failing, error, &answers).await;
            assert_eq!(
                (f.error.as_str(), f.cause.as_str()),
                (error, CAUSE),
                "{file}, {failing} failing {error}: {entered:?}"
            );
            assert_eq!(
                entered.last().map(String::as_str),
                Some(fail),
                "{file}: {entered:?}"
            );
        }
    }
}
