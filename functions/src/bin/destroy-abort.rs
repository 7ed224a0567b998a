//! Lambda main of the `destroy-abort` step.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    cdkd_functions::lambda::serve("destroy-abort").await
}
