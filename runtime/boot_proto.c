/* runtime/boot_proto.c — placeholder for the store wire protocol. */
typedef int boot_proto_placeholder;
