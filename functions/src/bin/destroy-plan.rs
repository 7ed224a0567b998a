//! Lambda main of the `destroy-plan` step.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    cdkd_functions::lambda::serve("destroy-plan").await
}
