//! A Task state's fields: its resource, Parameters and timeouts.

use serde_json::{Map, Value};

use super::fields::{invalid, seconds, template, unsupported};
use super::retry::common;
use crate::error::LoadError;
use crate::model::*;
use crate::template::Template;

pub(super) fn task(name: &str, obj: &Map<String, Value>) -> Result<TaskSpec, LoadError> {
    let res = obj
        .get("Resource")
        .and_then(Value::as_str)
        .ok_or_else(|| invalid(Some(name), "Resource (a string) is required"))?;
    let resource = match res {
        "arn:aws:states:::lambda:invoke" => Resource::LambdaInvoke,
        "arn:aws:states:::lambda:invoke.waitForTaskToken" => Resource::LambdaInvokeWaitForTaskToken,
        "arn:aws:states:::states:startExecution.sync:2" => Resource::StartExecutionSync { v2: true },
        "arn:aws:states:::states:startExecution.sync" => Resource::StartExecutionSync { v2: false },
        "arn:aws:states:::states:startExecution" => Resource::StartExecution,
        r if is_lambda_arn(r) => Resource::LambdaArn(r.to_string()),
        r => return Err(unsupported(name, &format!("Task resource '{r}' (supported: arn:aws:states:::lambda:invoke[.waitForTaskToken], a Lambda function ARN, arn:aws:states:::states:startExecution[.sync[:2]])"))),
    };
    let parameters = template(name, obj, "Parameters")?;
    if matches!(
        resource,
        Resource::LambdaInvoke | Resource::LambdaInvokeWaitForTaskToken
    ) {
        let has_fn = matches!(&parameters, Some(Template::Object(f)) if f.iter().any(|(k, _)| k == "FunctionName"));
        if !has_fn {
            return Err(invalid(
                Some(name),
                "lambda:invoke needs Parameters.FunctionName",
            ));
        }
    }
    if resource == Resource::LambdaInvokeWaitForTaskToken
        && !passes_task_token(obj.get("Parameters"))
    {
        // Nobody could answer the task: it would wait until its timeout.
        return Err(invalid(
            Some(name),
            "lambda:invoke.waitForTaskToken must pass $$.Task.Token in its Parameters",
        ));
    }
    if matches!(
        resource,
        Resource::StartExecutionSync { .. } | Resource::StartExecution
    ) {
        let has = matches!(&parameters, Some(Template::Object(f)) if f.iter().any(|(k, _)| k == "StateMachineArn"));
        if !has {
            return Err(invalid(
                Some(name),
                "startExecution needs Parameters.StateMachineArn",
            ));
        }
    }
    Ok(TaskSpec {
        resource,
        parameters,
        common: common(name, obj)?,
        timeout: seconds(name, obj, "TimeoutSeconds", "TimeoutSecondsPath")?,
        heartbeat: seconds(name, obj, "HeartbeatSeconds", "HeartbeatSecondsPath")?,
    })
}

/// Some `<key>.$` of the Parameters reads the context's `$$.Task.Token`.
fn passes_task_token(v: Option<&Value>) -> bool {
    match v {
        Some(Value::Object(m)) => m.iter().any(|(k, x)| {
            (k.ends_with(".$") && x.as_str().is_some_and(|s| s.contains("$$.Task.Token")))
                || passes_task_token(Some(x))
        }),
        Some(Value::Array(a)) => a.iter().any(|x| passes_task_token(Some(x))),
        _ => false,
    }
}

fn is_lambda_arn(r: &str) -> bool {
    let parts: Vec<&str> = r.splitn(7, ':').collect();
    parts.len() >= 7 && parts[0] == "arn" && parts[2] == "lambda" && parts[5] == "function"
}
