/**
 * Sends a file as the request body with XMLHttpRequest, the one browser API that reports upload
 * progress; the body is streamed from disk, never read into memory.
 */
export interface UploadOptions {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** Called as bytes leave: `sent` of `total`. */
  readonly onProgress?: (sent: number, total: number) => void;
  readonly signal?: AbortSignal;
}

export function uploadFile(url: string, file: Blob, options: UploadOptions = {}): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open(options.method ?? 'PUT', url);
    for (const [name, value] of Object.entries(options.headers ?? {})) xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => options.onProgress?.(e.loaded, e.lengthComputable ? e.total : file.size);
    xhr.onload = () => resolve({ status: xhr.status, text: xhr.responseText });
    xhr.onerror = () => reject(new Error('The upload failed: the connection was lost'));
    xhr.onabort = () => reject(new Error('The upload was cancelled'));
    options.signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(file);
  });
}
