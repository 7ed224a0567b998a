//! The readers of one region, the reads of a whole record (docs/repairs.md, "Per resource") and
//! the live attribute reads of an orphan (docs/repairs.md, "Live attribute reads"): which reader a record or an attribute
//! goes to is core's decision (`cdkd_core::repair::reading::{read_route,
//! attribute_route}`) over what the readers declare.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::sync::Arc;

use cdkd_core::json::ordered_entries;
use cdkd_core::repair::reading::{
    attribute_route, inline_policies_owned_elsewhere, read_route, ReadRoute,
};
use cdkd_core::repair::refresh::{read_plan, Plan, ReadResult};
use cdkd_core::repair::rewrite::{live_answer, LiveReads};
use futures::stream::{self, StreamExt};
use serde_json::{Map, Value};

use super::{ReadError, ReadRequest, Reader, SdkReader};

/// How many reads of one record are in flight at once by default.
pub const READ_CONCURRENCY: usize = 16;

/// The readers of one region.
#[derive(Clone, Default)]
pub struct Readers {
    sdk: BTreeMap<String, Arc<dyn Reader>>,
    /// `(type, attribute)` pairs the SDK readers read live.
    sdk_attributes: BTreeSet<(String, String)>,
    cloud_control: Option<Arc<dyn Reader>>,
}

/// Runs `job` on every item, at most `concurrency` at once (at least one); results in
/// completion order. The one bound of a record's reads, properties and attributes alike.
async fn bounded<I, T, F, Fut>(items: I, concurrency: usize, job: F) -> Vec<T>
where
    I: IntoIterator,
    F: FnMut(I::Item) -> Fut,
    Fut: Future<Output = T>,
{
    stream::iter(items)
        .map(job)
        .buffer_unordered(concurrency.max(1))
        .collect()
        .await
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
        for (t, a) in R::ATTRIBUTES {
            self.sdk_attributes
                .insert(((*t).to_owned(), (*a).to_owned()));
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

    /// Core's route for a live read of attribute `attr` of a record of `resource_type`,
    /// given these readers (docs/repairs.md, "Live attribute reads").
    pub fn attribute_route(
        &self,
        resource_type: &str,
        attr: &str,
        provisioned_by: Option<&str>,
    ) -> ReadRoute {
        let sdk = self.sdk.contains_key(resource_type)
            && self
                .sdk_attributes
                .contains(&(resource_type.to_owned(), attr.to_owned()));
        match attribute_route(resource_type, provisioned_by, sdk) {
            ReadRoute::CloudControl if self.cloud_control.is_none() => ReadRoute::Unsupported,
            r => r,
        }
    }

    fn reader_on(&self, req: &ReadRequest, route: ReadRoute) -> Option<&Arc<dyn Reader>> {
        match route {
            ReadRoute::Sdk => self.sdk.get(&req.resource_type),
            ReadRoute::CloudControl => self.cloud_control.as_ref(),
            ReadRoute::Unsupported => None,
        }
    }

    fn reader(&self, req: &ReadRequest) -> Option<&Arc<dyn Reader>> {
        self.reader_on(
            req,
            self.route(&req.resource_type, req.provisioned_by.as_deref()),
        )
    }

    /// Reads one record, as core's [`ReadResult`].
    pub async fn read(&self, req: &ReadRequest) -> ReadResult {
        let Some(reader) = self.reader(req) else {
            return ReadResult::NoReader;
        };
        if req.physical_id.is_empty() {
            return no_physical_id();
        }
        result(req, reader.read(req).await)
    }

    /// Reads the live attributes of one record through `route`'s reader, as core's
    /// [`ReadResult`] (the reading is the attributes object).
    pub async fn read_attributes_via(&self, req: &ReadRequest, route: ReadRoute) -> ReadResult {
        let Some(reader) = self.reader_on(req, route) else {
            return ReadResult::NoReader;
        };
        if req.physical_id.is_empty() {
            return no_physical_id();
        }
        result(req, reader.attributes(req).await)
    }

    /// The live answers for `pairs` (`(logicalId, attribute)` of records of `record`, as
    /// `cdkd_core::repair::rewrite::live_reads_needed` lists them): each record is read
    /// once per reader its attributes route to, at most `concurrency` reads at once, and
    /// core turns each reading into the answer of each attribute (docs/repairs.md, "Live attribute reads").
    pub async fn read_live_attributes(
        &self,
        record: &Map<String, Value>,
        pairs: &[(String, String)],
        concurrency: usize,
    ) -> LiveReads {
        let empty = Map::new();
        let resources = match record.get("resources") {
            Some(Value::Object(m)) => m,
            _ => &empty,
        };
        let null = Value::Null;
        let mut reqs: BTreeMap<&str, ReadRequest> = BTreeMap::new();
        let mut routes: Vec<(&str, &str, ReadRoute)> = Vec::new();
        for (id, attr) in pairs {
            let req = reqs
                .entry(id.as_str())
                .or_insert_with(|| request(record, id, resources.get(id).unwrap_or(&null)));
            let route =
                self.attribute_route(&req.resource_type, attr, req.provisioned_by.as_deref());
            routes.push((id.as_str(), attr.as_str(), route));
        }
        let jobs: BTreeSet<(&str, ReadRoute)> = routes.iter().map(|(id, _, r)| (*id, *r)).collect();
        let reqs = &reqs;
        let reads: BTreeMap<(&str, ReadRoute), ReadResult> =
            bounded(jobs, concurrency, |(id, route)| async move {
                (
                    (id, route),
                    self.read_attributes_via(&reqs[id], route).await,
                )
            })
            .await
            .into_iter()
            .collect();
        routes
            .into_iter()
            .map(|(id, attr, route)| {
                let req = &reqs[id];
                let answer = live_answer(
                    &reads[&(id, route)],
                    id,
                    &req.resource_type,
                    &req.physical_id,
                    attr,
                );
                ((id.to_owned(), attr.to_owned()), answer)
            })
            .collect()
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
        bounded(&reqs, concurrency, |r| async move {
            (r.logical_id.clone(), self.read(r).await)
        })
        .await
        .into_iter()
        .collect()
    }
}

/// A record without a physical id is never read.
fn no_physical_id() -> ReadResult {
    ReadResult::Failed("the record has no physical id to read it by".into())
}

/// A reader's answer for `req` as core's [`ReadResult`].
fn result(req: &ReadRequest, r: Result<Option<Value>, ReadError>) -> ReadResult {
    match r {
        Ok(Some(v)) => ReadResult::Read(v),
        Ok(None) => ReadResult::Gone,
        Err(ReadError::Unsupported(why)) => {
            tracing::debug!("{} {}: {why}", req.resource_type, req.physical_id);
            ReadResult::NoReader
        }
        Err(e) => ReadResult::Failed(e.to_string()),
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
