//! `states:startExecution` (and `.sync`, `.sync:2`): a child execution of a registered
//! state machine.

use chrono::Utc;
use serde_json::{json, Value};

use super::run::{arns, run_execution, Run};
use crate::error::{names, Failure};

impl Run {
    /// `sync`: `Some(v2)` waits for the execution (`.sync`, `.sync:2`); `None` starts it
    /// and answers at once, as StartExecution does.
    pub(super) async fn start_execution(
        &self,
        params: Value,
        sync: Option<bool>,
    ) -> Result<Value, Failure> {
        let arn = params
            .get("StateMachineArn")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                Failure::new(
                    names::RUNTIME,
                    "startExecution: StateMachineArn must be a string",
                )
            })?
            .to_string();
        let sm = {
            let machines = self.inner.machines.read().map_err(|_| {
                Failure::new(names::RUNTIME, "the state machine registry is poisoned")
            })?;
            machines
                .get(&arn)
                .or_else(|| {
                    machines
                        .iter()
                        .find(|(k, _)| k.rsplit(':').next() == arn.rsplit(':').next())
                        .map(|(_, v)| v)
                })
                .cloned()
        };
        let Some(sm) = sm else {
            return Err(Failure::new(
                "StepFunctions.StateMachineDoesNotExistException",
                format!(
                    "State Machine Does Not Exist: '{arn}' (not registered with the local engine)"
                ),
            ));
        };
        let input = match params.get("Input") {
            None => json!({}),
            Some(Value::String(s)) => serde_json::from_str(s).map_err(|e| {
                Failure::new(
                    "StepFunctions.InvalidExecutionInputException",
                    format!("Input is not JSON: {e}"),
                )
            })?,
            Some(v) => v.clone(),
        };
        let name = params
            .get("Name")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let (sm_arn, exec_arn) = arns(&self.inner.options, &sm.name, &name);
        let start = Utc::now().timestamp_millis();
        let Some(v2) = sync else {
            if let Some(again) = self.started_before(&name, &exec_arn, &input)? {
                return Ok(again);
            }
            if let Ok(mut named) = self.inner.named.lock() {
                named.insert(exec_arn.clone(), (input.clone(), start));
            }
            let handle = tokio::spawn(run_execution(
                self.inner.clone(),
                sm,
                input.clone(),
                name.clone(),
            ));
            if let Ok(mut started) = self.inner.started.lock() {
                started.insert(name.clone(), handle);
            }
            return Ok(json!({"ExecutionArn": exec_arn, "StartDate": start}));
        };
        let res = run_execution(self.inner.clone(), sm, input.clone(), name.clone()).await;
        let stop = Utc::now().timestamp_millis();
        let enc = |v: &Value| {
            if v2 {
                v.clone()
            } else {
                Value::String(v.to_string())
            }
        };
        let mut d = json!({
            "ExecutionArn": exec_arn,
            "Input": enc(&input),
            "InputDetails": {"Included": true},
            "Name": name,
            "RedriveCount": 0,
            "RedriveStatus": "NOT_REDRIVABLE",
            "StartDate": start,
            "StateMachineArn": sm_arn,
            "StopDate": stop,
        });
        match res {
            Ok(out) => {
                d["Output"] = enc(&out);
                d["OutputDetails"] = json!({"Included": true});
                d["Status"] = json!("SUCCEEDED");
                Ok(d)
            }
            Err(f) => {
                d["Status"] = json!("FAILED");
                d["Error"] = json!(f.error);
                d["Cause"] = json!(f.cause);
                d["RedriveStatus"] = json!("REDRIVABLE");
                Err(Failure::new(names::TASK_FAILED, d.to_string()))
            }
        }
    }

    /// Step Functions' answer to a start under a name this state machine has used
    /// (StartExecution: "Executions with the same name and input are considered
    /// idempotent"): the same start while that execution runs with the same input, else
    /// `ExecutionAlreadyExists` (named as moto's interpreter names it); `None`: a new name.
    fn started_before(
        &self,
        name: &str,
        exec_arn: &str,
        input: &Value,
    ) -> Result<Option<Value>, Failure> {
        let named = self
            .inner
            .named
            .lock()
            .map_err(|_| Failure::new(names::RUNTIME, "the execution registry is poisoned"))?;
        let Some((first_input, start)) = named.get(exec_arn) else {
            return Ok(None);
        };
        let running = self
            .inner
            .started
            .lock()
            .ok()
            .and_then(|s| s.get(name).map(|h| !h.is_finished()))
            .unwrap_or(false);
        if running && first_input == input {
            return Ok(Some(json!({"ExecutionArn": exec_arn, "StartDate": start})));
        }
        Err(Failure::new(
            "StepFunctions.ExecutionAlreadyExistsException",
            format!("Execution Already Exists: '{exec_arn}'"),
        ))
    }
}
