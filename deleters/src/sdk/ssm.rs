//! `AWS::SSM::Parameter`: the physical id is the parameter name.

use async_trait::async_trait;

use crate::error::{aws_error_info, DeleteError};
use crate::guard;
use crate::progress::DeleteProgress;
use crate::read::props::Props;
use crate::read::{answered, found, ReadError, ReadRequest, Reader, SdkReader};
use crate::request::DeleteRequest;
use crate::{Deleter, SdkDeleter};
use serde_json::Value;

pub struct SsmParameterDeleter {
    ssm: aws_sdk_ssm::Client,
}

impl SsmParameterDeleter {
    pub fn new(ssm: aws_sdk_ssm::Client) -> Self {
        SsmParameterDeleter { ssm }
    }
}

impl SdkDeleter for SsmParameterDeleter {
    const TYPES: &'static [&'static str] = &["AWS::SSM::Parameter"];
}

#[async_trait]
impl Deleter for SsmParameterDeleter {
    async fn start(&self, req: &DeleteRequest) -> Result<DeleteProgress, DeleteError> {
        let name = req.physical_id.as_str();
        match self.ssm.delete_parameter().name(name).send().await {
            Ok(_) => Ok(DeleteProgress::Done),
            Err(e) => {
                let info = aws_error_info(&e);
                if info.code_is(&["ParameterNotFound"]) {
                    return guard::not_found(
                        req,
                        self.ssm.config().region().map(|r| r.as_ref()),
                        !name.is_empty() && !name.starts_with("arn:"),
                        &format!("SSM says parameter {name} does not exist"),
                    );
                }
                Err(DeleteError::from_aws(req, "DeleteParameter", &info))
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// Reader (docs/repairs.md, "Per resource"): GetParameter without decryption, DescribeParameters,
// ListTagsForResource. A SecureString's value is never read (nor decrypted).

impl SdkReader for SsmParameterDeleter {
    const READS: &'static [&'static str] = &["AWS::SSM::Parameter"];
    const ATTRIBUTES: &'static [(&'static str, &'static str)] = &[
        ("AWS::SSM::Parameter", "Type"),
        ("AWS::SSM::Parameter", "Value"),
    ];
}

impl SsmParameterDeleter {
    /// GetParameter without decryption; `None` when the parameter does not exist.
    async fn get(
        &self,
        name: &str,
    ) -> Result<Option<aws_sdk_ssm::operation::get_parameter::GetParameterOutput>, ReadError> {
        let sent = self
            .ssm
            .get_parameter()
            .name(name)
            .with_decryption(false)
            .send()
            .await;
        found("GetParameter", &["ParameterNotFound"], sent)
    }
}

/// Type, and Value unless the parameter is a SecureString.
fn type_and_value(p: &mut Props, param: Option<&aws_sdk_ssm::types::Parameter>) {
    use aws_sdk_ssm::types::ParameterType;
    let ty = param.and_then(|p| p.r#type());
    p.opt("Type", ty.map(|t| t.as_str()));
    if ty != Some(&ParameterType::SecureString) {
        p.opt("Value", param.and_then(|p| p.value()));
    }
}

#[async_trait]
impl Reader for SsmParameterDeleter {
    async fn read(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        use aws_sdk_ssm::types::{ParameterStringFilter, ResourceTypeForTagging};
        let name = req.physical_id.as_str();
        let Some(out) = self.get(name).await? else {
            return Ok(None);
        };
        let param = out.parameter();
        let mut p = Props::new();
        p.set("Name", name);
        type_and_value(&mut p, param);
        p.opt("DataType", param.and_then(|p| p.data_type()));
        let filter = ParameterStringFilter::builder()
            .key("Name")
            .option("Equals")
            .values(name)
            .build()
            .map_err(|e| ReadError::Failed(e.to_string()))?;
        let described = answered(
            "DescribeParameters",
            self.ssm
                .describe_parameters()
                .parameter_filters(filter)
                .send()
                .await,
        )?;
        if let Some(meta) = described
            .parameters()
            .iter()
            .find(|m| m.name() == Some(name))
        {
            p.opt("Description", meta.description());
            p.opt("AllowedPattern", meta.allowed_pattern());
            p.opt("Tier", meta.tier().map(|t| t.as_str()));
        }
        let tags = answered(
            "ListTagsForResource",
            self.ssm
                .list_tags_for_resource()
                .resource_type(ResourceTypeForTagging::Parameter)
                .resource_id(name)
                .send()
                .await,
        )?;
        let map: serde_json::Map<String, Value> = tags
            .tag_list()
            .iter()
            .map(|t| (t.key().to_owned(), Value::String(t.value().to_owned())))
            .collect();
        p.nonempty("Tags", Value::Object(map));
        Ok(Some(p.build()))
    }

    /// GetParameter without decryption: Type, and Value (never a SecureString's, whose
    /// Value then reads as undefined).
    async fn attributes(&self, req: &ReadRequest) -> Result<Option<Value>, ReadError> {
        let Some(out) = self.get(&req.physical_id).await? else {
            return Ok(None);
        };
        let mut p = Props::new();
        type_and_value(&mut p, out.parameter());
        Ok(Some(p.build()))
    }
}
