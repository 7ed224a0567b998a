//! The Lambda side of a step: JSON lines logs, the SDK from the environment, and the
//! step's `StepError` name as the Lambda error type (what `Retry` / `Catch` match on).

use lambda_runtime::{service_fn, Diagnostic, LambdaEvent};
use serde_json::Value;

use crate::deps::Deps;
use crate::error::StepError;

impl From<StepError> for Diagnostic {
    fn from(e: StepError) -> Self {
        Diagnostic {
            error_type: e.name,
            error_message: e.message,
        }
    }
}

/// Serves `step` until the Lambda runtime stops the process.
pub async fn serve(step: &'static str) -> Result<(), lambda_runtime::Error> {
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .with_current_span(false)
        .without_time()
        .init();
    let deps = Deps::from_env().await;
    let deps = &deps;
    lambda_runtime::run(service_fn(move |event: LambdaEvent<Value>| async move {
        crate::steps::invoke(step, event.payload, deps).await
    }))
    .await
}
