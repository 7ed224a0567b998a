//! Lambda main of the `destroy-finish` step.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    cdkd_functions::lambda::serve("destroy-finish").await
}
