#!/usr/bin/env python3
"""Writes chakra-synthetic.0.et: a SYNTHETIC MLCommons Chakra execution trace (README-chakra.md).

The file is in Chakra's format (schema/protobuf/et_def.proto of mlcommons/chakra; the layout of
its protolib.encodeMessage: each message preceded by its length as a varint): a GlobalMetadata
message, then Node messages. The protobuf encoding is written out here with the standard library
alone, fields in field-number order and proto3's rules (zero scalars left out, repeated integers
packed, a oneof member written even when zero), so the bytes are what protobuf would write.

The times, sizes and names are made up, so that each figure of tests/observe/chakra_test.cc can be
counted by hand; they measure nothing. Run from anywhere: python3 make_chakra_fixture.py
"""

import os
import struct

# et_def.proto: NodeType and CollectiveCommType.
METADATA_NODE, MEM_LOAD_NODE, COMP_NODE = 1, 2, 4
COMM_SEND_NODE, COMM_COLL_NODE = 5, 7
ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER = 0, 2, 7

VARINT, I64, LEN, I32 = 0, 1, 2, 5  # protobuf wire types


def varint(v):
    v &= (1 << 64) - 1  # a negative int64 is written as its 64-bit two's complement
    out = bytearray()
    while True:
        low = v & 0x7F
        v >>= 7
        if v:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def int_field(field, v):
    return tag(field, VARINT) + varint(v) if v else b""  # proto3 leaves zero out


def len_field(field, data):
    if isinstance(data, str):
        data = data.encode()
    return tag(field, LEN) + varint(len(data)) + data if data else b""


def packed(field, values):
    return len_field(field, b"".join(varint(v) for v in values))


# AttributeProto: name = 1, then one member of its oneof, written even when zero.
def attr(name, field, wire, payload):
    return len_field(1, name) + tag(field, wire) + payload


def int64_attr(name, v):
    return attr(name, 9, VARINT, varint(v))


def uint64_attr(name, v):
    return attr(name, 13, VARINT, varint(v))


def int32_attr(name, v):
    return attr(name, 7, VARINT, varint(v))


def bool_attr(name, v):
    return attr(name, 27, VARINT, varint(1 if v else 0))


def string_attr(name, s):
    s = s.encode()
    return attr(name, 29, LEN, varint(len(s)) + s)


def io_info(values="", shapes="", types=""):  # IOInfo: values = 1, shapes = 2, types = 3
    return len_field(1, values) + len_field(2, shapes) + len_field(3, types)


def node(id, name, type, start=0, dur=0, ctrl=(), data=(), inputs=b"", outputs=b"", attrs=()):
    return (int_field(1, id) + len_field(2, name) + int_field(3, type) + packed(4, ctrl) +
            packed(5, data) + int_field(6, start) + int_field(7, dur) + len_field(8, inputs) +
            len_field(9, outputs) + b"".join(len_field(10, a) for a in attrs))


def op_attrs(rf_id, cpu):
    """The attributes Chakra's PyTorch converter gives every node (a subset), and is_cpu_op."""
    return [int64_attr("rf_id", rf_id), int64_attr("seq_id", -1), int64_attr("tid", 1),
            string_attr("op_schema", ""), bool_attr("is_cpu_op", cpu)]


def cpu_op(id, name, start, dur, ctrl=()):
    return node(id, name, COMP_NODE, start, dur, ctrl=ctrl, attrs=op_attrs(id, True))


def kernel(id, name, start, dur, data=(), inputs=b"", outputs=b""):
    return node(id, name, COMP_NODE, start, dur, data=data, inputs=inputs, outputs=outputs,
                attrs=op_attrs(id, False))


def collective(id, name, comm_type, size, start, dur, data=()):
    return node(id, name, COMM_COLL_NODE, start, dur, data=data,
                attrs=op_attrs(id, False) + [int64_attr("comm_type", comm_type),
                                             int64_attr("comm_size", size),
                                             string_attr("pg_name", "0")])


def wire_type_zoo():
    """A METADATA_NODE whose attributes use every wire type a reader must skip."""
    return [
        attr("double", 3, I64, struct.pack("<d", 1.25)),
        attr("float", 5, I32, struct.pack("<f", 1.25)),
        attr("fixed32", 19, I32, struct.pack("<I", 12345)),
        attr("sfixed64", 25, I64, struct.pack("<q", -12345)),
        attr("sint64", 17, VARINT, varint(2 * 12345 - 1)),  # zigzag of -12345
        attr("int64_list", 10, LEN, varint(len(packed(1, [1, 300]))) + packed(1, [1, 300])),
        string_attr("note", "synthetic: made up by make_chakra_fixture.py; measures nothing"),
    ]


def trace():
    metadata = len_field(1, "0.0.4") + b"".join(len_field(2, a) for a in [
        string_attr("schema", "1.0.2-chakra.0.0.4"),
        uint64_attr("pid", 4242),
        string_attr("time", "2026-11-27 00:00:00 (synthetic)"),
        uint64_attr("start_ts", 1000),
        uint64_attr("finish_ts", 3000),
    ])
    gemm_in = io_info("[[64, 128], [128, 256]]", "[[64, 128], [128, 256]]",
                      "['Tensor(c10::BFloat16)', 'Tensor(c10::BFloat16)']")
    gemm_out = io_info("[[64, 256]]", "[[64, 256]]", "['Tensor(c10::BFloat16)']")
    nodes = [
        node(0, "process_group:init", METADATA_NODE, inputs=io_info("[[{\"pg_name\": \"0\"}]]"),
             attrs=wire_type_zoo()),
        # Step 3: 1000-2000 us.
        cpu_op(1, "ProfilerStep#3", 1000, 1000),
        cpu_op(2, "aten::mm", 1000, 30, ctrl=[1]),
        kernel(3, "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64", 1000, 400,
               data=[2], inputs=gemm_in, outputs=gemm_out),
        cpu_op(4, "record_param_comms", 1290, 15, ctrl=[1]),
        collective(5, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevComm*, unsigned long, "
                   "ncclWork*)", ALL_REDUCE, 32 << 20, 1300, 300, data=[3, 4]),
        cpu_op(6, "aten::add_", 1420, 20, ctrl=[1]),  # a CPU op: no kernel, no compute
        node(7, "offload_load", MEM_LOAD_NODE, 1450, 100,
             attrs=[uint64_attr("tensor_size", 1 << 20)]),  # a memory node: no kernel
        # No is_cpu_op attribute (as Chakra's text converter writes nodes): a GPU node.
        node(8, "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>>",
             COMP_NODE, 1650, 50),
        # Step 4: 2010-2910 us.
        cpu_op(9, "ProfilerStep#4", 2010, 900),
        kernel(10, "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>", 2010, 200),
        kernel(11, "ampere_bf16_s16816gemm_bf16_128x128_ldg8_f2f_tn", 2150, 300, data=[10]),
        collective(12, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", REDUCE_SCATTER, 16 << 20,
                   2300, 100, data=[11]),
        node(13, "ncclDevKernel_SendRecv(ncclDevComm*, unsigned long, ncclWork*)", COMM_SEND_NODE,
             2600, 50, attrs=op_attrs(13, False) + [int64_attr("comm_size", 1 << 20),
                                                    int32_attr("comm_src", 0),
                                                    int32_attr("comm_dst", 1),
                                                    int32_attr("comm_tag", 7)]),
        collective(14, "ncclDevKernel_AllGather_RING_LL", ALL_GATHER, 8 << 20, 2800, 200),
        kernel(15, "Memset (Device)", 2950, 0),  # no duration: no kernel
    ]
    return b"".join(varint(len(m)) + m for m in [metadata] + nodes)


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "chakra-synthetic.0.et")
    with open(out, "wb") as f:
        f.write(trace())
