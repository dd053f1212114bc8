#include "python/arrow_stream.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace tuneprof::python {
namespace {

constexpr int64_t kNullable = 2;  // ARROW_FLAG_NULLABLE

// What a schema node owns: its strings, its children and its dictionary's schema.
struct SchemaData {
  std::string format;
  std::string name;
  std::vector<ArrowSchema*> children;
  ArrowSchema* dictionary = nullptr;
};

// Releases a schema or array node as the C data interface asks: its children and its dictionary through
// their own release callbacks, then what the node owns.
template <typename Node>
void ReleaseOwned(Node* node) {
  if (node->release != nullptr) node->release(node);
  delete node;
}

template <typename Node, typename Data>
void ReleaseNode(Node* node) {
  auto* data = static_cast<Data*>(node->private_data);
  for (Node* child : data->children) ReleaseOwned(child);
  if (data->dictionary != nullptr) ReleaseOwned(data->dictionary);
  delete data;
  node->release = nullptr;
}

void FillSchema(ArrowSchema* schema, std::string format, std::string name, int64_t flags) {
  auto* data = new SchemaData{std::move(format), std::move(name), {}, nullptr};
  std::memset(schema, 0, sizeof(*schema));
  schema->format = data->format.c_str();
  schema->name = data->name.c_str();
  schema->flags = flags;
  schema->release = ReleaseNode<ArrowSchema, SchemaData>;
  schema->private_data = data;
}

void AttachChildren(ArrowSchema* schema) {
  auto* data = static_cast<SchemaData*>(schema->private_data);
  schema->n_children = static_cast<int64_t>(data->children.size());
  schema->children = data->children.data();
  schema->dictionary = data->dictionary;
}

void FillTableSchema(const DataTable& table, ArrowSchema* out) {
  FillSchema(out, "+s", "", 0);
  auto* data = static_cast<SchemaData*>(out->private_data);
  for (const DataColumn& column : table.columns) {
    auto* child = new ArrowSchema;
    switch (column.type) {
      case DataColumnType::kInt64:
        FillSchema(child, "l", column.name, kNullable);
        break;
      case DataColumnType::kFloat64:
        FillSchema(child, "g", column.name, kNullable);
        break;
      case DataColumnType::kString: {
        FillSchema(child, "i", column.name, kNullable);
        auto* dictionary = new ArrowSchema;
        FillSchema(dictionary, "u", "", kNullable);
        static_cast<SchemaData*>(child->private_data)->dictionary = dictionary;
        AttachChildren(child);
        break;
      }
    }
    data->children.push_back(child);
  }
  AttachChildren(out);
}

// What an array node owns: the table it views, its buffer list, its children, its dictionary, and for a
// dictionary the utf8 offsets and bytes built from the categories.
struct ArrayData {
  std::shared_ptr<const DataTable> table;
  std::vector<const void*> buffers;
  std::vector<ArrowArray*> children;
  ArrowArray* dictionary = nullptr;
  std::vector<int32_t> offsets;
  std::string bytes;
};

ArrayData* FillArray(ArrowArray* array, std::shared_ptr<const DataTable> table, int64_t length,
                     std::vector<const void*> buffers) {
  auto* data = new ArrayData{std::move(table), std::move(buffers), {}, nullptr, {}, {}};
  std::memset(array, 0, sizeof(*array));
  array->length = length;
  array->n_buffers = static_cast<int64_t>(data->buffers.size());
  array->buffers = data->buffers.data();
  array->release = ReleaseNode<ArrowArray, ArrayData>;
  array->private_data = data;
  return data;
}

ArrowArray* DictionaryOf(const DataColumn& column, const std::shared_ptr<const DataTable>& table) {
  auto* dictionary = new ArrowArray;
  ArrayData* data = FillArray(dictionary, table, static_cast<int64_t>(column.categories.size()), {});
  data->offsets.reserve(column.categories.size() + 1);
  data->offsets.push_back(0);
  for (const std::string& text : column.categories) {
    data->bytes += text;
    data->offsets.push_back(static_cast<int32_t>(data->bytes.size()));
  }
  data->buffers = {nullptr, data->offsets.data(), data->bytes.data()};
  dictionary->n_buffers = 3;
  dictionary->buffers = data->buffers.data();
  return dictionary;
}

void FillTableArray(const std::shared_ptr<const DataTable>& table, ArrowArray* out) {
  const auto rows = static_cast<int64_t>(table->rows());
  ArrayData* data = FillArray(out, table, rows, {nullptr});
  for (const DataColumn& column : table->columns) {
    auto* child = new ArrowArray;
    switch (column.type) {
      case DataColumnType::kInt64:
        FillArray(child, table, rows, {nullptr, column.ints.data()});
        break;
      case DataColumnType::kFloat64:
        FillArray(child, table, rows, {nullptr, column.floats.data()});
        break;
      case DataColumnType::kString: {
        ArrayData* codes = FillArray(child, table, rows, {nullptr, column.codes.data()});
        codes->dictionary = DictionaryOf(column, table);
        child->dictionary = codes->dictionary;
        break;
      }
    }
    data->children.push_back(child);
  }
  out->n_children = static_cast<int64_t>(data->children.size());
  out->children = data->children.data();
}

struct StreamData {
  std::shared_ptr<const DataTable> table;
  bool sent = false;
};

int GetSchema(ArrowArrayStream* stream, ArrowSchema* out) {
  FillTableSchema(*static_cast<StreamData*>(stream->private_data)->table, out);
  return 0;
}

int GetNext(ArrowArrayStream* stream, ArrowArray* out) {
  auto* data = static_cast<StreamData*>(stream->private_data);
  if (data->sent) {
    std::memset(out, 0, sizeof(*out));  // release == nullptr: the end of the stream
    return 0;
  }
  data->sent = true;
  FillTableArray(data->table, out);
  return 0;
}

const char* GetLastError(ArrowArrayStream*) { return nullptr; }

void ReleaseStream(ArrowArrayStream* stream) {
  delete static_cast<StreamData*>(stream->private_data);
  stream->release = nullptr;
}

}  // namespace

void ExportArrowStream(std::shared_ptr<const DataTable> table, ArrowArrayStream* out) {
  out->get_schema = GetSchema;
  out->get_next = GetNext;
  out->get_last_error = GetLastError;
  out->release = ReleaseStream;
  out->private_data = new StreamData{std::move(table), false};
}

}  // namespace tuneprof::python
