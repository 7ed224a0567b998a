//! Lambda main of the `destroy-wave` step.
#[tokio::main]
async fn main() -> Result<(), lambda_runtime::Error> {
    cdkd_functions::lambda::serve("destroy-wave").await
}
