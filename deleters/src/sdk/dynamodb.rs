//! `AWS::DynamoDB::Table`: DeleteTable by name, then poll DescribeTable until the table
//! is gone (asynchronous: the handle survives across wave invocations). Budget 30 min
//! (docs/destroy.md, "One record in a wave" step 5).
//!
//! Deletion protection (docs/destroy.md, "SDK deleters"): with `removeProtection` a protected table is first
//! updated to `DeletionProtectionEnabled=false`, then the deleter waits until the table
//! is ACTIVE and unprotected (a [`Handle::Steps`] in phase `unprotect`, resumable across
//! calls) and deletes it. Without the flag a protected table fails with a message naming
//! it and saying to re-run with `--remove-protection`.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::{backoff_ms, now_ms, DeleteProgress, Handle};
use crate::read::props::{tag_list, Props};
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::steps::{await_gone, resume_gone, At, Steps};
use crate::{Deleter, SdkDeleter};
use cdkd_core::run::HandlePhase;
use serde_json::{json, Value};

/// How long a table may take to disappear.
pub const TABLE_DELETE_BUDGET_MS: u64 = 30 * 60 * 1000;

/// The step of a protected table: protection being turned off, waiting for ACTIVE.
const UNPROTECT: Steps = Steps {
    phase: HandlePhase::Unprotect,
    budget_ms: TABLE_DELETE_BUDGET_MS,
};

pub struct DynamoTableDeleter {
    ddb: aws_sdk_dynamodb::Client,
}

/// What DescribeTable says of a table that exists.
struct TableState {
    status: String,
    protected: bool,
}

impl DynamoTableDeleter {
    pub fn new(ddb: aws_sdk_dynamodb::Client) -> Self {
        DynamoTableDeleter { ddb }
    }

    fn region(&self) -> Option<&str> {
        self.ddb.config().region().map(|r| r.as_ref())
    }

    /// `Some(state)` while the table exists, `None` once DescribeTable says it is gone.
    async fn describe(&self, req: &DeleteRequest) -> Result<Option<TableState>, DeleteError> {
        match self
            .ddb
            .describe_table()
            .table_name(&req.physical_id)
            .send()
            .await
        {
            Ok(out) => Ok(Some(TableState {
                status: out
                    .table()
                    .and_then(|t| t.table_status())
                    .map(|s| s.as_str().to_owned())
                    .unwrap_or_default(),
                protected: out
                    .table()
                    .and_then(|t| t.deletion_protection_enabled())
                    .unwrap_or(false),
            })),
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

    fn in_flight(at: At) -> DeleteProgress {
        await_gone(
            at,
            now_ms().saturating_add(backoff_ms(at.polls, 2000, 20_000)),
        )
    }

    fn unprotecting(at: At) -> DeleteProgress {
        UNPROTECT.in_flight(
            Value::Null,
            at,
            now_ms().saturating_add(backoff_ms(at.polls, 1000, 10_000)),
        )
    }

    /// One poll of the unprotect step: delete once the table is ACTIVE and unprotected.
    async fn poll_unprotect(
        &self,
        req: &DeleteRequest,
        at: At,
    ) -> Result<DeleteProgress, DeleteError> {
        let state = match self.describe(req).await {
            Ok(s) => s,
            Err(e) if e.retryable => return Ok(Self::unprotecting(at.next())),
            Err(e) => return Err(e),
        };
        match state {
            // Gone meanwhile: DeleteTable says so under the region guard.
            None => self.delete(req, at.started_ms).await,
            Some(t) if t.status == "ACTIVE" && !t.protected => {
                self.delete(req, at.started_ms).await
            }
            Some(t) => {
                at.within_deadline(req, now_ms(), || {
                    format!(
                        "table still {} (deletion protection {}) after {} min of waiting to delete it",
                        t.status,
                        if t.protected { "on" } else { "off" },
                        TABLE_DELETE_BUDGET_MS / 60_000
                    )
                })?;
                Ok(Self::unprotecting(at.next()))
            }
        }
    }

    /// The failure of a protected table when the run did not ask to remove protection.
    fn protected_error(req: &DeleteRequest) -> DeleteError {
        DeleteError::failed(
            req,
            format!(
                "DynamoDB table {} has deletion protection enabled; nothing was deleted. Re-run the destroy with --remove-protection to turn it off and delete the table",
                req.physical_id
            ),
        )
    }

    /// Turns deletion protection off (UpdateTable).
    async fn unprotect(&self, req: &DeleteRequest) -> Result<(), DeleteError> {
        self.ddb
            .update_table()
            .table_name(&req.physical_id)
            .deletion_protection_enabled(false)
            .send()
            .await
            .map(|_| ())
            .map_err(|e| DeleteError::from_aws(req, "UpdateTable", &aws_error_info(&e)))
    }

    /// DeleteTable and what it means; `started` is when this delete began.
    async fn delete(
        &self,
        req: &DeleteRequest,
        started: u64,
    ) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
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
                    if self.describe(req).await?.map(|t| t.status).as_deref() == Some("DELETING") {
                        return Ok(Self::in_flight(At::start(started, TABLE_DELETE_BUDGET_MS)));
                    }
                    let mut info = info;
                    info.retryable = true;
                    return Err(DeleteError::from_aws(req, "DeleteTable", &info));
                }
                if is_protection_refusal(info.code.as_deref(), &info.message) {
                    if req.options.remove_protection {
                        // Protection came back (or was missed): turn it off and wait.
                        self.unprotect(req).await?;
                        return Ok(Self::unprotecting(UNPROTECT.first(started)));
                    }
                    return Err(Self::protected_error(req));
                }
                return Err(DeleteError::from_aws(req, "DeleteTable", &info));
            }
        }
        match self.describe(req).await? {
            None => Ok(DeleteProgress::Done),
            Some(_) => Ok(Self::in_flight(At::start(started, TABLE_DELETE_BUDGET_MS))),
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

/// DeleteTable's refusal of a protected table: a ValidationException that speaks of
/// deletion protection (AWS: "currently protected against deletion"; the emulator:
/// "while DeletionProtectionEnabled is set to True").
pub fn is_protection_refusal(code: Option<&str>, message: &str) -> bool {
    code == Some("ValidationException")
        && (message.contains("protected against deletion")
            || message.contains("DeletionProtectionEnabled")
            || message.contains("deletion protection"))
}

impl SdkDeleter for DynamoTableDeleter {
    const TYPES: &'static [&'static str] = &["AWS::DynamoDB::Table"];
}

#[async_trait]
impl Deleter for DynamoTableDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        guard::refuse_final_snapshot(req, "DynamoDB's DeleteTable takes no final snapshot")?;
        let started = now_ms();
        if req.options.remove_protection {
            // Look first: a protected table is unprotected before any delete call.
            match self.describe(req).await {
                Ok(Some(t)) if t.protected => {
                    self.unprotect(req).await?;
                    return Ok(Self::unprotecting(UNPROTECT.first(started)));
                }
                // Gone, unprotected, or not describable: DeleteTable decides.
                Ok(_) | Err(_) => {}
            }
        }
        self.delete(req, started).await
    }

    async fn poll(
        &self,
        req: &DeleteRequest,
        handle: &Handle,
    ) -> Result<DeleteProgress, DeleteError> {
        if let Some((at, _)) = UNPROTECT.resume(handle) {
            return self.poll_unprotect(req, at).await;
        }
        let Some(at) = resume_gone(handle) else {
            return super::no_poll(req, handle);
        };
        match self.describe(req).await {
            Ok(None) => Ok(DeleteProgress::Done),
            Ok(Some(t)) => {
                at.within_deadline(req, now_ms(), || {
                    format!(
                        "table still exists (status {}) after the delete budget of {} min",
                        t.status,
                        TABLE_DELETE_BUDGET_MS / 60_000
                    )
                })?;
                Ok(Self::in_flight(at.next()))
            }
            // A throttled or failed describe is retried in place on the next poll.
            Err(e) if e.retryable => Ok(Self::in_flight(at.next())),
            Err(e) => Err(e),
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): DescribeTable, DescribeTimeToLive, ListTagsOfResource.

impl SdkReader for DynamoTableDeleter {
    const READS: &'static [&'static str] = &["AWS::DynamoDB::Table"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::DynamoDB::Table", "Arn"),
        ("AWS::DynamoDB::Table", "StreamArn"),
    ];
}

fn key_schema(keys: &[aws_sdk_dynamodb::types::KeySchemaElement]) -> Value {
    keys.iter()
        .map(|k| json!({"AttributeName": k.attribute_name(), "KeyType": k.key_type().as_str()}))
        .collect()
}

fn projection(p: Option<&aws_sdk_dynamodb::types::Projection>) -> Value {
    let mut out = Props::new();
    if let Some(p) = p {
        out.opt("ProjectionType", p.projection_type().map(|t| t.as_str()));
        out.list("NonKeyAttributes", p.non_key_attributes().to_vec());
    }
    out.build()
}

impl DynamoTableDeleter {
    /// DescribeTable of `name` for a reader; `None` when the table is gone.
    async fn read_table(
        &self,
        name: &str,
    ) -> Result<Option<aws_sdk_dynamodb::types::TableDescription>, ReadError> {
        let sent = self.ddb.describe_table().table_name(name).send().await;
        Ok(found("DescribeTable", &["ResourceNotFoundException"], sent)?.and_then(|o| o.table))
    }
}

#[async_trait]
impl Reader for DynamoTableDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let name = req.physical_id.as_str();
        let Some(t) = self.read_table(name).await? else {
            return Ok(None);
        };
        let t = &t;
        let mut p = Props::new();
        p.set("TableName", name);
        let defs: Value = t
            .attribute_definitions()
            .iter()
            .map(|d| json!({"AttributeName": d.attribute_name(), "AttributeType": d.attribute_type().as_str()}))
            .collect();
        p.set("AttributeDefinitions", defs);
        p.set("KeySchema", key_schema(t.key_schema()));
        let billing = t
            .billing_mode_summary()
            .and_then(|b| b.billing_mode())
            .map_or("PROVISIONED", |m| m.as_str());
        p.set("BillingMode", billing);
        if billing == "PROVISIONED" {
            if let Some(pt) = t.provisioned_throughput() {
                p.set(
                    "ProvisionedThroughput",
                    json!({"ReadCapacityUnits": pt.read_capacity_units(), "WriteCapacityUnits": pt.write_capacity_units()}),
                );
            }
        }
        let gsis: Value = t
            .global_secondary_indexes()
            .iter()
            .map(|i| {
                let mut g = Props::new();
                g.opt("IndexName", i.index_name());
                g.set("KeySchema", key_schema(i.key_schema()));
                g.set("Projection", projection(i.projection()));
                if billing == "PROVISIONED" {
                    g.opt("ProvisionedThroughput", i.provisioned_throughput().map(|pt| {
                        json!({"ReadCapacityUnits": pt.read_capacity_units(), "WriteCapacityUnits": pt.write_capacity_units()})
                    }));
                }
                g.build()
            })
            .collect();
        p.nonempty("GlobalSecondaryIndexes", gsis);
        let lsis: Value = t
            .local_secondary_indexes()
            .iter()
            .map(|i| {
                let mut l = Props::new();
                l.opt("IndexName", i.index_name());
                l.set("KeySchema", key_schema(i.key_schema()));
                l.set("Projection", projection(i.projection()));
                l.build()
            })
            .collect();
        p.nonempty("LocalSecondaryIndexes", lsis);
        if let Some(s) = t.stream_specification().filter(|s| s.stream_enabled()) {
            p.opt(
                "StreamSpecification",
                s.stream_view_type()
                    .map(|v| json!({"StreamViewType": v.as_str()})),
            );
        }
        if let Some(sse) = t.sse_description() {
            let enabled = sse.status().is_some_and(|s| s.as_str() == "ENABLED");
            p.set("SSESpecification", json!({"SSEEnabled": enabled}));
        }
        p.opt(
            "TableClass",
            t.table_class_summary()
                .and_then(|c| c.table_class())
                .map(|c| c.as_str()),
        );
        p.opt("DeletionProtectionEnabled", t.deletion_protection_enabled());
        let ttl = answered(
            "DescribeTimeToLive",
            self.ddb
                .describe_time_to_live()
                .table_name(name)
                .send()
                .await,
        )?;
        if let Some(d) = ttl.time_to_live_description() {
            let on = d
                .time_to_live_status()
                .is_some_and(|s| s.as_str() == "ENABLED");
            if let (true, Some(attr)) = (on, d.attribute_name()) {
                p.set(
                    "TimeToLiveSpecification",
                    json!({"AttributeName": attr, "Enabled": true}),
                );
            }
        }
        if let Some(arn) = t.table_arn() {
            let tags = answered(
                "ListTagsOfResource",
                self.ddb
                    .list_tags_of_resource()
                    .resource_arn(arn)
                    .send()
                    .await,
            )?;
            p.nonempty(
                "Tags",
                tag_list(tags.tags().iter().map(|t| (t.key(), t.value()))),
            );
        }
        Ok(Some(p.build()))
    }

    /// DescribeTable: Arn, StreamArn (the latest stream's; absent without a stream).
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(t) = self.read_table(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        p.opt("Arn", t.table_arn());
        p.opt("StreamArn", t.latest_stream_arn());
        Ok(Some(p.build()))
    }
}

#[cfg(test)]
mod tests {
    use super::is_protection_refusal;

    #[test]
    fn protection_refusal_is_recognised_from_aws_and_emulator_wording() {
        assert!(is_protection_refusal(
            Some("ValidationException"),
            "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first."
        ));
        assert!(is_protection_refusal(
            Some("ValidationException"),
            "1 validation error detected: Table 't' can't be deleted while DeletionProtectionEnabled is set to True"
        ));
        assert!(!is_protection_refusal(
            Some("ValidationException"),
            "1 validation error detected: TableName too short"
        ));
        assert!(!is_protection_refusal(
            Some("ResourceInUseException"),
            "protected against deletion"
        ));
    }
}
