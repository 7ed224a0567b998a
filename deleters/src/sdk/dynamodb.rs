//! `AWS::DynamoDB::Table`: DeleteTable by name, then poll DescribeTable until the table
//! is gone (asynchronous: the handle survives across wave invocations). Budget 30 min
//! (spec §2.8 step 5).

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError, DeleteErrorKind};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::request::DeleteRequest;
use crate::Deleter;

/// How long a table may take to disappear.
pub const TABLE_DELETE_BUDGET_MS: u64 = 30 * 60 * 1000;

pub struct DynamoTableDeleter {
    ddb: aws_sdk_dynamodb::Client,
}

impl DynamoTableDeleter {
    pub fn new(ddb: aws_sdk_dynamodb::Client) -> Self {
        DynamoTableDeleter { ddb }
    }

    fn region(&self) -> Option<&str> {
        self.ddb.config().region().map(|r| r.as_ref())
    }

    /// `Some(status)` while the table exists, `None` once DescribeTable says it is gone.
    async fn describe(&self, req: &DeleteRequest) -> Result<Option<String>, DeleteError> {
        match self
            .ddb
            .describe_table()
            .table_name(&req.physical_id)
            .send()
            .await
        {
            Ok(out) => Ok(Some(
                out.table()
                    .and_then(|t| t.table_status())
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_default(),
            )),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    Ok(None)
                } else {
                    Err(DeleteError::from_aws(req, "DescribeTable", &info))
                }
            }
        }
    }

    fn in_flight(started_ms: u64, polls: u32) -> DeleteProgress {
        let now = now_ms();
        DeleteProgress::InFlight {
            handle: Handle::AwaitGone {
                started_ms,
                deadline_ms: started_ms.saturating_add(TABLE_DELETE_BUDGET_MS),
                polls,
            },
            expected_done_ms: now.saturating_add(backoff_ms(polls, 2000, 20_000)),
        }
    }
}

/// A table name (3-255 of letters, digits, `_`, `-`, `.`).
fn is_table_name(id: &str) -> bool {
    (3..=255).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-' || b == b'.')
}

#[async_trait]
impl Deleter for DynamoTableDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        let started = now_ms();
        match self.ddb.delete_table().table_name(name).send().await {
            Ok(_) => {}
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    return guard::not_found(
                        req,
                        self.region(),
                        is_table_name(name),
                        &format!("DynamoDB says table {name} does not exist"),
                    );
                }
                if info.code_is(&["ResourceInUseException"]) {
                    // Already being deleted (an earlier attempt) → wait for it; another
                    // state (creating, updating) → try again later.
                    if self.describe(req).await?.as_deref() == Some("DELETING") {
                        return Ok(Self::in_flight(started, 0));
                    }
                    let mut info = info;
                    info.retryable = true;
                    return Err(DeleteError::from_aws(req, "DeleteTable", &info));
                }
                return Err(DeleteError::from_aws(req, "DeleteTable", &info));
            }
        }
        match self.describe(req).await? {
            None => Ok(DeleteProgress::Done),
            Some(_) => Ok(Self::in_flight(started, 0)),
        }
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        let Handle::AwaitGone {
            started_ms,
            deadline_ms,
            polls,
        } = handle
        else {
            return super::no_poll(req, handle);
        };
        match self.describe(req).await {
            Ok(None) => Ok(DeleteProgress::Done),
            Ok(Some(status)) => {
                if now_ms() > *deadline_ms {
                    return Err(DeleteError::new(
                        req,
                        DeleteErrorKind::Timeout,
                        format!(
                            "table still exists (status {status}) after the delete budget of {} min",
                            TABLE_DELETE_BUDGET_MS / 60_000
                        ),
                    ));
                }
                Ok(Self::in_flight(*started_ms, polls.saturating_add(1)))
            }
            // A throttled or failed describe is retried in place on the next poll.
            Err(e) if e.retryable => Ok(Self::in_flight(*started_ms, polls.saturating_add(1))),
            Err(e) => Err(e),
        }
    }
}
