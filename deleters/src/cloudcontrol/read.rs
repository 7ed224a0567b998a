//! The Cloud Control reader (docs/repairs.md, "Per resource"): `GetResource` for every type Cloud
//! Control reads and no SDK reader declares. The identifier is derived as for a delete
//! (core's `cloud_control_identifier`); a record it cannot be derived for is
//! unsupported, never read by guess. Cloud Control answers in CloudFormation's property
//! names, so the reading lines up with the record as it is.
//!
//! The same resource model answers orphan's live attribute reads (docs/repairs.md, "Live attribute reads"): it holds the
//! type's read-only properties too, which are its GetAtt attributes (`Arn`, nested ones
//! such as `Endpoint.Address` as nested objects).

use async_trait::async_trait;
use cdkd_core::destroy::identifiers::cloud_control_identifier;
use serde_json::Value;

use crate::error::aws_error_info;
use crate::read::{ReadError, ReadRequest, Reader};

/// Error codes of a type Cloud Control cannot read.
const TYPE_NOT_READ: &[&str] = &[
    "UnsupportedActionException",
    "TypeNotFoundException",
    "HandlerNotFoundException",
];

pub struct CloudControlReader {
    cc: aws_sdk_cloudcontrol::Client,
}

impl CloudControlReader {
    pub fn new(cc: aws_sdk_cloudcontrol::Client) -> Self {
        CloudControlReader { cc }
    }
}

/// The identifier to read `req` by, or why there is none.
pub fn read_identifier(req: &ReadRequest) -> Result<String, ReadError> {
    let ident = cloud_control_identifier(
        &req.resource_type,
        &req.physical_id,
        req.properties.as_object(),
        req.attributes.as_object(),
        req.provisioned_by.as_deref(),
    );
    ident.as_sent().ok_or_else(|| {
        ReadError::Unsupported(format!(
            "no Cloud Control identifier for {} {}",
            req.resource_type, req.physical_id
        ))
    })
}

#[async_trait]
impl Reader for CloudControlReader {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        self.model(req).await
    }

    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        self.model(req).await
    }
}

impl CloudControlReader {
    /// `GetResource`'s resource model (properties and read-only attributes); `None` when
    /// the resource does not exist.
    async fn model(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let identifier = read_identifier(req)?;
        let out = match self
            .cc
            .get_resource()
            .type_name(&req.resource_type)
            .identifier(&identifier)
            .send()
            .await
        {
            Ok(out) => out,
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ResourceNotFoundException"]) {
                    return Ok(None);
                }
                if info.code_is(TYPE_NOT_READ) {
                    return Err(ReadError::Unsupported(info.message));
                }
                return Err(crate::read::aws_failure("Cloud Control GetResource", &e));
            }
        };
        let text = out
            .resource_description()
            .and_then(|d| d.properties())
            .ok_or_else(|| {
                ReadError::Failed("Cloud Control GetResource answered without properties".into())
            })?;
        match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            _ => Err(ReadError::Failed(
                "Cloud Control GetResource answered properties that are not a JSON object".into(),
            )),
        }
    }
}
