//! Lambda main of the `cleanup-select` step.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    cdkd_functions::lambda::serve("cleanup-select").await
}
