/* A CUDA driver program for the security checks (check_security.py), on
 * the emulated driver:
 *
 *   security_prog work N              N rounds of a copy each way
 *   security_prog wait                work; "ready" on stdout; sleeps until killed
 *   security_prog setenv VAR VALUE    work; setenv(VAR, VALUE); work; 700 ms
 *                                     (snapshots come meanwhile); work
 *   security_prog nvtx NAME DOMAIN    an NVTX range NAME in DOMAIN ("" the
 *                                     default domain) around work, and a
 *                                     mark NAME */
#include <cuda.h>
#include <nvtx3/nvToolsExt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "app_driver.h"

#define BYTES (16u << 10)

static CUdeviceptr dev_buf;
static unsigned char host_buf[BYTES];

static void setup(void)
{
    app_primary_context();
    app_check(cuMemAlloc(&dev_buf, BYTES), "cuMemAlloc");
}

static void work(int n)
{
    for (int i = 0; i < n; i++) {
        app_check(cuMemcpyHtoD(dev_buf, host_buf, BYTES), "cuMemcpyHtoD");
        app_check(cuMemcpyDtoH(host_buf, dev_buf, BYTES), "cuMemcpyDtoH");
    }
}

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0)
        ;
}

static void nvtx_range(const char *name, const char *domain_name)
{
    nvtxDomainHandle_t domain = domain_name[0] ? nvtxDomainCreateA(domain_name) : NULL;
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_ASCII;
    a.message.ascii = name;
    nvtxDomainRangePushEx(domain, &a);
    work(2);
    nvtxDomainRangePop(domain);
    nvtxDomainMarkEx(domain, &a);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    setup();
    if (!strcmp(mode, "work") && argc == 3) {
        work(atoi(argv[2]));
    } else if (!strcmp(mode, "wait")) {
        work(2);
        printf("ready\n");
        fflush(stdout);
        for (;;)
            pause();
    } else if (!strcmp(mode, "setenv") && argc == 4) {
        work(2);
        setenv(argv[2], argv[3], 1);
        work(2);
        sleep_ms(700);
        work(2);
    } else if (!strcmp(mode, "nvtx") && argc == 4) {
        nvtx_range(argv[2], argv[3]);
    } else {
        fprintf(stderr, "usage: security_prog work N | wait | setenv VAR VALUE | "
                        "nvtx NAME DOMAIN\n");
        return 2;
    }
    return 0;
}
