# Two images from one build of the static binary:
#   docker build -t acctapi .                        Debian slim with Tesseract
#                                                    (German, English): reads
#                                                    photos and scans too
#   docker build --target static -t acctapi:static . distroless, the binary
#                                                    alone: photos and scans
#                                                    end skipped
# Both run as the same non-root user (uid 65532), so a /data volume moves
# from one to the other as it is.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath \
    -ldflags "-s -w -X acctapi/cmd.version=${VERSION} -X acctapi/cmd.commit=${COMMIT}" \
    -o /out/acctapi . \
 && mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot AS static
COPY --from=build /out/acctapi /usr/local/bin/acctapi
COPY --from=build --chown=nonroot:nonroot /out/data /data
USER nonroot:nonroot
ENV ACCTAPI_ADDR=0.0.0.0:8080 \
    ACCTAPI_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
# distroless has no shell or curl: the binary asks the server itself.
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/acctapi", "health"]
ENTRYPOINT ["/usr/local/bin/acctapi"]
CMD ["serve"]

# The default image (the last stage): the same binary beside Tesseract, which
# reads images and the pages of scanned PDFs. tesseract-ocr brings the
# orientation data (tesseract-ocr-osd) that turns a photo upright.
FROM debian:12-slim
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    ca-certificates tesseract-ocr tesseract-ocr-deu tesseract-ocr-eng \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 65532 acctapi \
 && useradd --system --uid 65532 --gid 65532 --home-dir /data --no-create-home --shell /usr/sbin/nologin acctapi
COPY --from=build /out/acctapi /usr/local/bin/acctapi
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
ENV ACCTAPI_ADDR=0.0.0.0:8080 \
    ACCTAPI_DATA_DIR=/data
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=10s --start-period=30s --retries=3 \
    CMD ["/usr/local/bin/acctapi", "health"]
ENTRYPOINT ["/usr/local/bin/acctapi"]
CMD ["serve"]
