// SPDX-License-Identifier: Apache-2.0
// Unit tests for the CLI's input parsers (.npy, .safetensors, JSON) and
// size parsing: valid files parse to the right view, every malformed or
// truncated variant is rejected with a message and no out-of-bounds read
// (the suite also runs under ASan).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tests/support/synthetic.h"
#include "tools/cli/container_roundtrip.h"
#include "tools/cli/errors.h"
#include "tools/cli/json_strict.h"
#include "tools/cli/options.h"
#include "tools/cli/tensor_formats.h"

namespace {

using splitzip::Dtype;
using szcli::DtypeHint;
using szcli::TensorView;

std::vector<uint8_t> npy(const std::string& dict, const std::vector<uint8_t>& payload, int version = 1) {
  std::string h = dict;
  const size_t prefix = version == 1 ? 10 : 12;
  while ((prefix + h.size() + 1) % 64) h += ' ';
  h += '\n';
  std::vector<uint8_t> b = {0x93, 'N', 'U', 'M', 'P', 'Y', static_cast<uint8_t>(version), 0};
  const uint64_t n = h.size();
  b.push_back(static_cast<uint8_t>(n));
  b.push_back(static_cast<uint8_t>(n >> 8));
  if (version != 1) {
    b.push_back(static_cast<uint8_t>(n >> 16));
    b.push_back(static_cast<uint8_t>(n >> 24));
  }
  const size_t at = b.size();
  b.resize(at + h.size() + payload.size());
  std::memcpy(b.data() + at, h.data(), h.size());
  if (!payload.empty()) std::memcpy(b.data() + at + h.size(), payload.data(), payload.size());
  return b;
}

std::vector<uint8_t> safetensors(const std::string& json, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> b(8 + json.size() + payload.size());
  const uint64_t n = json.size();
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(n >> (8 * i));
  std::memcpy(b.data() + 8, json.data(), json.size());
  if (!payload.empty()) std::memcpy(b.data() + 8 + json.size(), payload.data(), payload.size());
  return b;
}

std::vector<uint8_t> bytes(size_t n, uint8_t seed = 1) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7);
  return v;
}

bool parse_npy(const std::vector<uint8_t>& b, TensorView* v, std::string* err, DtypeHint hint = {}) {
  return szcli::parse_npy(b.data(), b.size(), hint, v, err);
}

bool parse_st(const std::vector<uint8_t>& b, const std::string& t, TensorView* v, std::string* err,
              DtypeHint hint = {}, bool whole = false) {
  return szcli::parse_safetensors(b.data(), b.size(), t, hint, v, err, whole);
}

TEST(Npy, ParsesEachSupportedDescr) {
  struct Case {
    const char* descr;
    Dtype dtype;
    uint32_t width;
  } cases[] = {{"<f2", Dtype::fp16, 2},           {"<f4", Dtype::fp32, 4},  {"<V2", Dtype::bf16, 2},
               {"|V2", Dtype::bf16, 2},           {"bfloat16", Dtype::bf16, 2},
               {"float8_e5m2", Dtype::fp8_e5m2, 1},
               // numpy + ml_dtypes: float8_e4m3fn saves as '<V1', float8_e5m2 as '<f1'
               {"<V1", Dtype::fp8_e4m3, 1},       {"|V1", Dtype::fp8_e4m3, 1},
               {"<f1", Dtype::fp8_e5m2, 1},       {"float8_e4m3fn", Dtype::fp8_e4m3, 1}};
  for (const Case& c : cases) {
    const auto payload = bytes(6 * 5 * c.width);
    const auto b = npy(std::string("{'descr': '") + c.descr + "', 'fortran_order': False, 'shape': (6, 5), }", payload);
    TensorView v;
    std::string err;
    ASSERT_TRUE(parse_npy(b, &v, &err)) << c.descr << ": " << err;
    EXPECT_EQ(v.dtype, c.dtype) << c.descr;
    EXPECT_EQ(v.n_elems, 30u);
    EXPECT_EQ(v.bytes, payload.size());
    EXPECT_EQ(0, std::memcmp(v.data, payload.data(), payload.size()));
  }
}

TEST(Npy, OneByteDescrsAndTheDtypeHint) {
  const auto payload = bytes(8);
  auto file = [&](const char* descr) {
    return npy(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (8,), }", payload);
  };
  TensorView v;
  std::string err;
  ASSERT_TRUE(parse_npy(file("<V1"), &v, &err, {true, Dtype::fp8_e5m2})) << err;  // --dtype overrides '<V1'
  EXPECT_EQ(v.dtype, Dtype::fp8_e5m2);
  EXPECT_FALSE(parse_npy(file("<f1"), &v, &err, {true, Dtype::fp8_e4m3}));  // '<f1' is e5m2 only
  EXPECT_NE(err.find("fp8_e5m2"), std::string::npos) << err;
  EXPECT_FALSE(parse_npy(file("|u1"), &v, &err));  // raw bytes: say which dtype
  EXPECT_NE(err.find("--dtype"), std::string::npos) << err;
  ASSERT_TRUE(parse_npy(file("|u1"), &v, &err, {true, Dtype::fp8_e4m3})) << err;
  EXPECT_EQ(v.dtype, Dtype::fp8_e4m3);
}

TEST(Npy, VersionTwoScalarsFortranAndEmpty) {
  TensorView v;
  std::string err;
  ASSERT_TRUE(parse_npy(npy("{'descr': '<f4', 'fortran_order': True, 'shape': (3, 2)}", bytes(24), 2), &v, &err))
      << err;
  EXPECT_EQ(v.n_elems, 6u);
  ASSERT_TRUE(parse_npy(npy("{\"descr\": \"<f2\", \"fortran_order\": False, \"shape\": ()}", bytes(2)), &v, &err))
      << err;
  EXPECT_EQ(v.n_elems, 1u);  // a 0-d array holds one element
  ASSERT_TRUE(parse_npy(npy("{'descr': '<f2', 'fortran_order': False, 'shape': (4, 0)}", {}), &v, &err)) << err;
  EXPECT_EQ(v.n_elems, 0u);
}

TEST(Npy, RawPatternsNeedAMatchingDtype) {
  const auto b = npy("{'descr': '<u2', 'fortran_order': False, 'shape': (8,)}", bytes(16));
  TensorView v;
  std::string err;
  EXPECT_FALSE(parse_npy(b, &v, &err));
  EXPECT_NE(err.find("--dtype"), std::string::npos);
  EXPECT_TRUE(parse_npy(b, &v, &err, {true, Dtype::bf16})) << err;
  EXPECT_TRUE(parse_npy(b, &v, &err, {true, Dtype::fp16})) << err;
  EXPECT_FALSE(parse_npy(b, &v, &err, {true, Dtype::fp32}));
  // a typed descr must agree with --dtype
  const auto f = npy("{'descr': '<f2', 'fortran_order': False, 'shape': (8,)}", bytes(16));
  EXPECT_FALSE(parse_npy(f, &v, &err, {true, Dtype::bf16}));
  EXPECT_TRUE(parse_npy(f, &v, &err, {true, Dtype::fp16})) << err;
}

TEST(Npy, RejectsMalformedHeaders) {
  const char* bad[] = {
      "{'descr': '>f2', 'fortran_order': False, 'shape': (8,)}",   // big-endian
      "{'descr': '<f8', 'fortran_order': False, 'shape': (8,)}",   // unsupported
      "{'descr': [('a', '<f2')], 'fortran_order': False, 'shape': (8,)}",
      "{'descr': '<f2', 'shape': (8,)}",                            // missing key
      "{'descr': '<f2', 'descr': '<f2', 'fortran_order': False, 'shape': (8,)}",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (8,), 'x': 1}",
      "{'descr': '<f2', 'fortran_order': maybe, 'shape': (8,)}",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (-8,)}",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (8,)} junk",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (8,)",
      "{'descr': '<f2\\x', 'fortran_order': False, 'shape': (8,)}",
      "['descr', '<f2']",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",  // overflow
      "{'descr': '<f2', 'fortran_order': False, 'shape': (99999999999999999999,)}",
      "{'descr': '<f2', 'fortran_order': False, 'shape': (9,)}",  // 18 bytes needed, 16 present
      "{'descr': '<f2', 'fortran_order': False, 'shape': (7,)}",  // trailing data
  };
  for (const char* d : bad) {
    TensorView v;
    std::string err;
    EXPECT_FALSE(parse_npy(npy(d, bytes(16)), &v, &err)) << d;
    EXPECT_FALSE(err.empty()) << d;
  }
}

TEST(Npy, EveryTruncationIsRejected) {
  const auto b = npy("{'descr': '<f2', 'fortran_order': False, 'shape': (3, 7)}", bytes(42));
  for (size_t n = 0; n < b.size(); ++n) {
    std::vector<uint8_t> t(b.begin(), b.begin() + static_cast<long>(n));  // exact-size copy for ASan
    TensorView v;
    std::string err;
    EXPECT_FALSE(szcli::parse_npy(t.data(), t.size(), {}, &v, &err)) << n;
  }
  // header length field pointing past the end
  auto c = b;
  c[8] = 0xff;
  c[9] = 0xff;
  TensorView v;
  std::string err;
  EXPECT_FALSE(parse_npy(c, &v, &err));
  EXPECT_NE(err.find("past the end"), std::string::npos);
}

const char kModel[] =
    "{\"__metadata__\":{\"format\":\"pt\"},"
    "\"a\":{\"dtype\":\"BF16\",\"shape\":[2,3],\"data_offsets\":[0,12]},"
    "\"b\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[12,20]},"
    "\"c\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[20,28]},"
    "\"d\":{\"dtype\":\"F8_E5M2\",\"shape\":[3],\"data_offsets\":[28,31]},"
    "\"e\":{\"dtype\":\"F16\",\"shape\":[],\"data_offsets\":[31,33]}}";

TEST(Safetensors, SelectsTensorsByName) {
  const auto payload = bytes(33);
  const auto b = safetensors(kModel, payload);
  struct Want {
    const char* name;
    Dtype dtype;
    uint64_t off, n;
  } wants[] = {{"a", Dtype::bf16, 0, 6}, {"b", Dtype::fp32, 12, 2}, {"d", Dtype::fp8_e5m2, 28, 3},
               {"e", Dtype::fp16, 31, 1}};
  for (const Want& w : wants) {
    TensorView v;
    std::string err;
    ASSERT_TRUE(parse_st(b, w.name, &v, &err)) << w.name << ": " << err;
    EXPECT_EQ(v.dtype, w.dtype);
    EXPECT_EQ(v.n_elems, w.n);
    EXPECT_EQ(v.data, b.data() + 8 + std::strlen(kModel) + w.off);
    EXPECT_EQ(v.name, w.name);
  }
  TensorView v;
  std::string err;
  // No name: the whole file, every non-empty tensor in data order, the
  // non-floating ones (I64 "c") framed as fp8_e5m2 bytes.
  EXPECT_FALSE(parse_st(b, "", &v, &err));  // one tensor wanted: several need a name
  EXPECT_NE(err.find("--tensor"), std::string::npos);
  ASSERT_TRUE(parse_st(b, "", &v, &err, {}, true)) << err;
  EXPECT_TRUE(v.whole_file);
  EXPECT_EQ(v.header_off, 8u);
  EXPECT_EQ(v.header_size, std::strlen(kModel));
  EXPECT_EQ(v.bytes, 33u);
  ASSERT_EQ(v.parts.size(), 5u);
  const Dtype part_dtypes[] = {Dtype::bf16, Dtype::fp32, Dtype::fp8_e5m2, Dtype::fp8_e5m2, Dtype::fp16};
  uint64_t at = 0;
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(v.parts[i].dtype, part_dtypes[i]) << i;
    EXPECT_EQ(v.parts[i].begin, at) << i;
    at = v.parts[i].end;
  }
  EXPECT_EQ(at, 33u);
  EXPECT_FALSE(parse_st(b, "", &v, &err, {true, Dtype::bf16}, true));  // --dtype needs --tensor
  EXPECT_NE(err.find("--tensor"), std::string::npos);
  EXPECT_FALSE(parse_st(b, "c", &v, &err));  // I64 is not a splitzip dtype
  EXPECT_NE(err.find("I64"), std::string::npos);
  EXPECT_FALSE(parse_st(b, "zz", &v, &err));
  EXPECT_FALSE(parse_st(b, "a", &v, &err, {true, Dtype::fp16}));
}

TEST(Safetensors, RejectsMalformedHeaders) {
  const std::string bad[] = {
      "[]",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,9]}}",        // size != shape
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[8,0]}}",        // reversed
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8,9]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,80]}}",       // past the data
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[-4],\"data_offsets\":[0,8]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4.0],\"data_offsets\":[0,8]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8.0]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8],\"x\":1}}",
      "{\"a\":{\"dtype\":16,\"shape\":[4],\"data_offsets\":[0,8]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]},"
      "\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}",  // duplicate key
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
      "\"b\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[2,6]}}",  // overlap
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[4,8]}}",  // gap at the start
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]}}",  // data not covered
      "{\"__metadata__\":{\"k\":1},\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4294967296,4294967296],\"data_offsets\":[0,8]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,18446744073709551616]}}",
      "{\"a\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}} x",
      "{}",
  };
  for (const std::string& j : bad) {
    TensorView v;
    std::string err;
    EXPECT_FALSE(parse_st(safetensors(j, bytes(8)), "a", &v, &err)) << j;
    EXPECT_FALSE(err.empty()) << j;
  }
}

TEST(Safetensors, EveryTruncationAndHugeLengthsAreRejected) {
  const auto b = safetensors(kModel, bytes(33));
  for (size_t n = 0; n < b.size(); ++n) {
    std::vector<uint8_t> t(b.begin(), b.begin() + static_cast<long>(n));
    TensorView v;
    std::string err;
    EXPECT_FALSE(parse_st(t, "a", &v, &err)) << n;
  }
  auto c = b;
  c[7] = 0x40;  // header length 2^62
  TensorView v;
  std::string err;
  EXPECT_FALSE(parse_st(c, "a", &v, &err));
}

TEST(Safetensors, RandomCorruptionNeverCrashes) {
  // Byte flips in a valid file: any answer is fine as long as an accepted
  // view lies inside the buffer (ASan checks the parser's own reads).
  const auto good = safetensors(kModel, bytes(33));
  const auto good_npy = npy("{'descr': '<f2', 'fortran_order': False, 'shape': (3, 7)}", bytes(42));
  for (uint64_t i = 0; i < 20000; ++i) {
    const uint64_t r = splitzip::synth::random_u64(7, i);
    auto b = (i & 1) ? good : good_npy;
    const int flips = 1 + static_cast<int>(r % 3);
    for (int f = 0; f < flips; ++f) {
      const uint64_t q = splitzip::synth::random_u64(8, i * 4 + static_cast<uint64_t>(f));
      b[q % b.size()] = static_cast<uint8_t>(q >> 32);
    }
    TensorView v;
    std::string err;
    const bool ok = (i & 1) ? parse_st(b, "a", &v, &err) : parse_npy(b, &v, &err);
    if (ok) {
      ASSERT_GE(v.data, b.data());
      ASSERT_LE(v.data + v.bytes, b.data() + b.size());
      ASSERT_EQ(v.bytes, v.n_elems * splitzip::dtype_bytes(v.dtype));
    } else {
      ASSERT_FALSE(err.empty());
    }
  }
}

TEST(Json, StrictParserStringsNumbersAndLimits) {
  szcli::Json v;
  std::string err;
  const char* text = "\"a\\u00e9\\ud83d\\ude00\\n\"";
  ASSERT_TRUE(szcli::parse_json_strict(text, std::strlen(text), &v, &err)) << err;
  EXPECT_EQ(v.get<std::string>(), "a\xc3\xa9\xf0\x9f\x98\x80\n");
  const char* bad[] = {"\"\\ud83d\"", "\"\\ude00\"", "\"a\x01\"", "01", "1.", "-", "[1,]", "{\"a\":1,}",
                       "{\"a\" 1}",   "tru",       "[1 2]",     "\"\\q\"", "",  "{\"a\":1,\"a\":2}",
                       "[{\"k\":[],\"k\":0}]", "// c\n1", "1 2"};
  for (const char* b : bad) {
    err.clear();
    EXPECT_FALSE(szcli::parse_json_strict(b, std::strlen(b), &v, &err)) << b;
    EXPECT_FALSE(err.empty()) << b;
  }
  const std::string deep(100000, '[');
  EXPECT_FALSE(szcli::parse_json_strict(deep.data(), deep.size(), &v, &err));
  EXPECT_NE(err.find("deep"), std::string::npos) << err;
  std::string ok_depth(szcli::kJsonMaxDepth, '[');
  ok_depth += std::string(szcli::kJsonMaxDepth, ']');
  EXPECT_TRUE(szcli::parse_json_strict(ok_depth.data(), ok_depth.size(), &v, &err)) << err;
  const char* dup = "{\"a\":{\"x\":1},\"b\":{\"x\":2}}";  // the same key in two objects is fine
  EXPECT_TRUE(szcli::parse_json_strict(dup, std::strlen(dup), &v, &err)) << err;
  const char* order = "{\"z\":1,\"a\":2}";
  ASSERT_TRUE(szcli::parse_json_strict(order, std::strlen(order), &v, &err)) << err;
  EXPECT_EQ(v.begin().key(), "z");  // source order kept

  uint64_t u = 0;
  ASSERT_TRUE(szcli::parse_json_strict("18446744073709551615", 20, &v, &err));
  EXPECT_TRUE(szcli::json_u64(v, &u));
  EXPECT_EQ(u, UINT64_MAX);
  ASSERT_TRUE(szcli::parse_json_strict("18446744073709551616", 20, &v, &err));
  EXPECT_FALSE(szcli::json_u64(v, &u));
  ASSERT_TRUE(szcli::parse_json_strict("-1", 2, &v, &err));
  EXPECT_FALSE(szcli::json_u64(v, &u));
  ASSERT_TRUE(szcli::parse_json_strict("-0", 2, &v, &err));
  EXPECT_FALSE(szcli::json_u64(v, &u));
  ASSERT_TRUE(szcli::parse_json_strict("1e3", 3, &v, &err));
  EXPECT_FALSE(szcli::json_u64(v, &u));
  ASSERT_TRUE(szcli::parse_json_strict("3.0", 3, &v, &err));
  EXPECT_FALSE(szcli::json_u64(v, &u));
}

TEST(Json, TextIsCompactAndSurvivesNonUtf8Names) {
  szcli::Json j = szcli::Json::object();
  j["a\"b"] = "x\ny";
  j["n"] = uint64_t{5};
  j["l"] = szcli::Json::array({true, nullptr, 1.5});
  j["nan"] = std::nan("");
  j["file"] = std::string("k\xff.sz");
  EXPECT_EQ(szcli::json_text(j),
            "{\"a\\\"b\":\"x\\ny\",\"n\":5,\"l\":[true,null,1.5],\"nan\":null,\"file\":\"k\xef\xbf\xbd.sz\"}");
}

TEST(Args, Sizes) {
  uint64_t v = 0;
  EXPECT_TRUE(szcli::parse_size("64G", &v));
  EXPECT_EQ(v, uint64_t{64} << 30);
  EXPECT_TRUE(szcli::parse_size("512MiB", &v));
  EXPECT_EQ(v, uint64_t{512} << 20);
  EXPECT_TRUE(szcli::parse_size("0", &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(szcli::parse_size("4k", &v));
  EXPECT_EQ(v, 4096u);
  EXPECT_FALSE(szcli::parse_size("17179869184G", &v));  // 2^34 GiB overflows
  EXPECT_FALSE(szcli::parse_size("1.5G", &v));
  EXPECT_FALSE(szcli::parse_size("G", &v));
  EXPECT_FALSE(szcli::parse_size("-1", &v));
  EXPECT_FALSE(szcli::parse_size("99999999999999999999", &v));
}

// The CLI11-backed parser keeps the getopt_long habits the commands document.
szcli::Args parse(std::vector<std::string> words) {
  static std::vector<std::string> keep;
  keep = std::move(words);
  keep.insert(keep.begin(), {"splitzip", "cmd"});
  std::vector<char*> av;
  for (auto& w : keep) av.push_back(w.data());
  return szcli::Args("cmd",
                     {{"output", 'o', true}, {"force", 'f', false}, {"keep", 'k', false}, {"threads", 'T', true}},
                     static_cast<int>(av.size()), av.data(), 2);
}

int usage_error(std::vector<std::string> words, std::string* message = nullptr) {
  try {
    parse(std::move(words));
  } catch (const szcli::CliError& e) {
    if (message) *message = e.message;
    return e.code;
  }
  return 0;
}

TEST(Args, GetoptHabits) {
  {
    const szcli::Args a = parse({"-fk", "-T4", "in", "--output=x", "-o", "-", "--", "-f"});
    EXPECT_TRUE(a.has("force"));
    EXPECT_TRUE(a.has("keep"));
    EXPECT_EQ(*a.value("threads"), "4");
    EXPECT_EQ(*a.value("output"), "-");  // the last one wins
    EXPECT_EQ(a.values("output"), (std::vector<std::string>{"x", "-"}));
    EXPECT_EQ(a.positional(), (std::vector<std::string>{"in", "-f"}));
  }
  {
    const szcli::Args a = parse({"-", "--threads", "2"});
    EXPECT_EQ(a.positional(), (std::vector<std::string>{"-"}));
    EXPECT_EQ(a.u64("threads", 0), 2u);
    EXPECT_FALSE(a.has("output"));
    EXPECT_EQ(a.value("output"), nullptr);
  }
  EXPECT_EQ(usage_error({"--nope"}), szcli::kExitUsage);
  EXPECT_EQ(usage_error({"-fz"}), szcli::kExitUsage);
  std::string msg;
  EXPECT_EQ(usage_error({"--nope=3"}, &msg), szcli::kExitUsage);
  EXPECT_EQ(msg, "cmd: unknown option '--nope' (see --help)");
  EXPECT_EQ(usage_error({"in", "-o"}, &msg), szcli::kExitUsage);
  EXPECT_EQ(msg, "cmd: option '--output' needs a value");
  EXPECT_EQ(usage_error({"--force=yes"}, &msg), szcli::kExitUsage);
  EXPECT_EQ(msg, "cmd: option '--force' takes no value");
  EXPECT_EQ(usage_error({"-T", "x"}), 0);  // parsed; u64() rejects it
  EXPECT_THROW(parse({"-T", "x"}).u64("threads", 0), szcli::CliError);
}

// NUL is no JSON whitespace (nlohmann alone would stop at it); spaces are
// the safetensors padding.
TEST(Json, NulBytesRefusedSpacesAccepted) {
  szcli::Json v;
  std::string err;
  const std::string spaced = "{\"a\":1}     ";
  EXPECT_TRUE(szcli::parse_json_strict(spaced.data(), spaced.size(), &v, &err)) << err;
  const std::string cases[] = {std::string("{\"a\":1}\0\0\0", 10), std::string("{\"a\":1}\0junk", 12),
                               std::string("{\"a\":\"x\0y\"}", 11), std::string("\0{}", 3)};
  for (const std::string& c : cases) {
    err.clear();
    EXPECT_FALSE(szcli::parse_json_strict(c.data(), c.size(), &v, &err));
    EXPECT_NE(err.find("NUL byte"), std::string::npos) << err;
  }
}

// One pass, linear: 100k keys keep their order, and a repeat at the end is
// still found.
TEST(Json, ManyKeysInOrder) {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i)
    text += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":{\"x\":[" + std::to_string(i) + "]}";
  szcli::Json v;
  std::string err;
  EXPECT_FALSE(szcli::parse_json_strict(text.data(), text.size(), &v, &err));  // not closed yet
  text += "}";
  ASSERT_TRUE(szcli::parse_json_strict(text.data(), text.size(), &v, &err)) << err;
  ASSERT_EQ(v.size(), 100000u);
  EXPECT_EQ(v.begin().key(), "k0");
  EXPECT_EQ((--v.end()).key(), "k99999");
  EXPECT_EQ(v["k77777"]["x"][0].get<uint64_t>(), 77777u);
  text.back() = ',';
  text += "\"k5\":0}";
  EXPECT_FALSE(szcli::parse_json_strict(text.data(), text.size(), &v, &err));
  EXPECT_NE(err.find("duplicate key \"k5\""), std::string::npos) << err;
}

// Streams that older versions wrote from NUL-padded safetensors headers
// still restore, byte for byte.
TEST(Containers, RestoresNulPaddedSafetensorsHeader) {
  const std::string hdr = std::string("{\"w\":{\"dtype\":\"BF16\",\"shape\":[4],\"data_offsets\":[0,8]}}") +
                          std::string(6, '\0');
  const uint16_t vals[4] = {0x3f80, 0x4000, 0x4040, 0x4080};
  splitzip::TensorDesc t;
  t.dtype = splitzip::Dtype::bf16;
  t.rank = 1;
  t.dims[0] = 4;
  t.total_elems = 4;
  t.container = splitzip::ContainerKind::safetensors;
  t.container_header = reinterpret_cast<const uint8_t*>(hdr.data());
  t.container_size = static_cast<uint32_t>(hdr.size());
  splitzip::CompressOptions o;
  o.tensor = &t;
  std::vector<uint8_t> frame(splitzip::compress_bound(splitzip::Dtype::bf16, 4) + splitzip::tensor_desc_size(t));
  const splitzip::Result r = splitzip::compress(splitzip::Dtype::bf16, vals, 4, frame.data(), frame.size(), o);
  ASSERT_EQ(r.status, splitzip::Status::ok);
  splitzip::FrameInfo fi;
  ASSERT_EQ(splitzip::frame_info(frame.data(), r.size, &fi), splitzip::Status::ok);
  szcli::ContainerRestorer restorer;
  const std::string prefix = restorer.next(fi, frame.data(), 0, 0, "test");
  ASSERT_EQ(prefix.size(), 8 + hdr.size());
  EXPECT_EQ(prefix.substr(8), hdr);
  EXPECT_NO_THROW(restorer.finish("test"));  // the 8 data bytes were this frame's
}

// zstd's level words: taken out before CLI11 (which would read -3 as a
// value or a file), kept as given for the commands that take them.
szcli::Args parse_levels(std::vector<std::string> words, bool takes_level) {
  static std::vector<std::string> keep;
  keep = std::move(words);
  keep.insert(keep.begin(), {"splitzip", "cmd"});
  std::vector<char*> av;
  for (auto& w : keep) av.push_back(w.data());
  std::vector<szcli::OptSpec> specs{{"output", 'o', true}, {"force", 'f', false}, {"quiet", 'q', false}};
  if (takes_level) specs.push_back({szcli::kLevelOption, 0, true});
  return szcli::Args("cmd", specs, static_cast<int>(av.size()), av.data(), 2);
}

TEST(Args, LevelWords) {
  const szcli::Args a = parse_levels({"-19", "in", "--fast=3", "-3fq", "--ultra", "-o", "-7", "--", "-5"}, true);
  EXPECT_EQ(a.values(szcli::kLevelOption), (std::vector<std::string>{"-19", "--fast=3", "-3", "--ultra"}));
  EXPECT_TRUE(a.has("force"));
  EXPECT_TRUE(a.has("quiet"));
  EXPECT_EQ(*a.value("output"), "-7");  // an option's value, not a level
  EXPECT_EQ(a.positional(), (std::vector<std::string>{"in", "-5"}));
  try {
    parse_levels({"in", "-3"}, false);
    FAIL() << "a level was accepted by a command without levels";
  } catch (const szcli::CliError& e) {
    EXPECT_EQ(e.code, szcli::kExitUsage);
    EXPECT_NE(e.message.find("'-3' is a compression level, which cmd does not take"), std::string::npos) << e.message;
  }
  try {
    parse_levels({"-v", "in"}, true);
    FAIL();
  } catch (const szcli::CliError& e) {
    EXPECT_EQ(e.message, "cmd: option -v (--verbose) is not taken by cmd (see --help)");
  }
}

}  // namespace
