//! The one Lambda bootstrap of every cdkd-flow step. Each step is its own Lambda function
//! (own role, memory, timeout) built from this binary; the function's `Handler` setting,
//! which Lambda passes to a custom runtime as `_HANDLER`, names the step it serves.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    let handler = std::env::var("_HANDLER").unwrap_or_default();
    let Some(step) = cdkd_functions::steps::step_named(&handler) else {
        let known: Vec<&str> = cdkd_functions::steps::STEPS
            .iter()
            .map(|(s, _)| *s)
            .collect();
        return Err(format!(
            "cdkd-step: the function's Handler is '{handler}', which names no step (one of: {})",
            known.join(", ")
        )
        .into());
    };
    cdkd_functions::lambda::serve(step).await
}
