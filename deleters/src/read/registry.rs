//! The readers of one region, and the reads of a whole record (docs/repairs.md §6.2):
//! which reader a record goes to is core's decision
//! (`cdkd_core::repair::reading::read_route`) over what the readers declare.

use std::collections::BTreeMap;
use std::sync::Arc;

use cdkd_core::json::ordered_entries;
use cdkd_core::repair::reading::{inline_policies_owned_elsewhere, read_route, ReadRoute};
use cdkd_core::repair::refresh::{read_plan, Plan, ReadResult};
use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use super::{ReadError, ReadRequest, Reader, SdkReader};

/// How many reads of one record are in flight at once by default.
pub const READ_CONCURRENCY: usize = 16;

/// The readers of one region.
#[derive(Clone, Default)]
pub struct Readers {
    sdk: BTreeMap<String, Arc<dyn Reader>>,
    cloud_control: Option<Arc<dyn Reader>>,
}

impl Readers {
    /// No readers: every record is unsupported until one is added.
    pub fn empty() -> Self {
        Readers::default()
    }

    /// Adds an SDK reader for every type it declares.
    pub fn with_sdk<R: SdkReader>(mut self, reader: R) -> Self {
        let reader: Arc<dyn Reader> = Arc::new(reader);
        for t in R::READS {
            self.sdk.insert((*t).to_owned(), Arc::clone(&reader));
        }
        self
    }

    /// Adds the Cloud Control reader, for every type without an SDK reader.
    pub fn with_cloud_control(mut self, reader: Arc<dyn Reader>) -> Self {
        self.cloud_control = Some(reader);
        self
    }

    /// Types that have an SDK reader.
    pub fn sdk_types(&self) -> impl Iterator<Item = &str> {
        self.sdk.keys().map(String::as_str)
    }

    /// Core's route for a record of `resource_type`, given these readers.
    pub fn route(&self, resource_type: &str, provisioned_by: Option<&str>) -> ReadRoute {
        match read_route(
            resource_type,
            provisioned_by,
            self.sdk.contains_key(resource_type),
        ) {
            ReadRoute::CloudControl if self.cloud_control.is_none() => ReadRoute::Unsupported,
            r => r,
        }
    }

    /// True when some reader would read a record of this type.
    pub fn has_reader(&self, resource_type: &str) -> bool {
        self.route(resource_type, None) != ReadRoute::Unsupported
    }

    fn reader(&self, req: &ReadRequest) -> Option<&Arc<dyn Reader>> {
        match self.route(&req.resource_type, req.provisioned_by.as_deref()) {
            ReadRoute::Sdk => self.sdk.get(&req.resource_type),
            ReadRoute::CloudControl => self.cloud_control.as_ref(),
            ReadRoute::Unsupported => None,
        }
    }

    /// Reads one record, as core's [`ReadResult`].
    pub async fn read(&self, req: &ReadRequest) -> ReadResult {
        let Some(reader) = self.reader(req) else {
            return ReadResult::NoReader;
        };
        if req.physical_id.is_empty() {
            return ReadResult::Failed("the record has no physical id to read it by".into());
        }
        match reader.read(req).await {
            Ok(Some(v)) => ReadResult::Read(v),
            Ok(None) => ReadResult::Gone,
            Err(ReadError::Unsupported(why)) => {
                tracing::debug!("{} {}: {why}", req.resource_type, req.physical_id);
                ReadResult::NoReader
            }
            Err(e) => ReadResult::Failed(e.to_string()),
        }
    }

    /// The requests for every entry of `record` that core plans to read, in record order.
    pub fn requests(&self, record: &Map<String, Value>) -> Vec<ReadRequest> {
        let Some(Value::Object(resources)) = record.get("resources") else {
            return Vec::new();
        };
        let plan: BTreeMap<String, Plan> = read_plan(record, &|t| self.has_reader(t))
            .into_iter()
            .collect();
        ordered_entries(resources)
            .into_iter()
            .filter(|(id, _)| plan.get(*id) == Some(&Plan::Read))
            .map(|(id, e)| request(record, id, e))
            .collect()
    }

    /// Reads every resource of `record` that core plans to read, at most `concurrency`
    /// at a time (at least one). Results by logical id.
    pub async fn read_record(
        &self,
        record: &Map<String, Value>,
        concurrency: usize,
    ) -> BTreeMap<String, ReadResult> {
        let reqs = self.requests(record);
        stream::iter(reqs.iter())
            .map(|r| async move { (r.logical_id.clone(), self.read(r).await) })
            .buffer_unordered(concurrency.max(1))
            .collect()
            .await
    }
}

fn str_of<'a>(e: &'a Value, k: &str) -> Option<&'a str> {
    e.get(k).and_then(Value::as_str)
}

/// The request for one entry of `record`.
pub fn request(record: &Map<String, Value>, logical_id: &str, entry: &Value) -> ReadRequest {
    let resource_type = str_of(entry, "resourceType").unwrap_or_default().to_owned();
    let physical_id = str_of(entry, "physicalId").unwrap_or_default().to_owned();
    let owned_elsewhere = if resource_type == "AWS::IAM::Role" {
        inline_policies_owned_elsewhere(record, &physical_id)
    } else {
        Vec::new()
    };
    ReadRequest {
        logical_id: logical_id.to_owned(),
        resource_type,
        physical_id,
        properties: entry.get("properties").cloned().unwrap_or(Value::Null),
        attributes: entry.get("attributes").cloned().unwrap_or(Value::Null),
        provisioned_by: str_of(entry, "provisionedBy").map(str::to_owned),
        owned_elsewhere,
    }
}
